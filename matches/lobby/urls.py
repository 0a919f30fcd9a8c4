"""URLs of the ranked queue and rematch (included by ``matches.urls``, namespace ``matches``)."""

from django.urls import path

from matches.lobby import views as queue_views

urlpatterns = [
    path("queue/", queue_views.queue_card, name="queue_card"),
    path("queue/join/", queue_views.queue_join, name="queue_join"),
    path("queue/leave/", queue_views.queue_leave, name="queue_leave"),
    path("matches/<int:match_id>/rematch/", queue_views.rematch, name="rematch"),
]
