"""History URLs: /u/<username>/matches/, /matches/<id>/replay/, /leaderboard/."""

from django.urls import path

from . import views

app_name = "history"

urlpatterns = [
    path("u/<str:username>/matches/", views.history, name="matches"),
    path("matches/<int:match_id>/replay/", views.replay, name="replay"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
