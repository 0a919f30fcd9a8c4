"""URLs of the JSON API (included by ``matches.urls``, namespace ``matches``)."""

from django.urls import path

from matches.api import views

urlpatterns = [
    path("api/matches/live/", views.api_live_matches, name="api_live"),
    path("api/matches/same-device/", views.api_same_device_create, name="api_same_device"),
    path("api/matches/computer/", views.api_computer_create, name="api_computer"),
    path("api/matches/<int:match_id>/state/", views.api_match_state, name="api_state"),
    path("api/invites/", views.api_invite_create, name="api_invite_create"),
    path("api/invites/<str:code>/accept/", views.api_invite_accept, name="api_invite_accept"),
]
