from django.urls import path

from matches.lobby import urls as queue_urls

from . import views

app_name = "matches"

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("invites/", views.invite_create, name="invite_create"),
    path("invites/<str:code>/", views.invite_detail, name="invite"),
    path("invites/<str:code>/status/", views.invite_status, name="invite_status"),
    path("invites/<str:code>/accept/", views.invite_accept, name="invite_accept"),
    path("invites/<str:code>/cancel/", views.invite_cancel, name="invite_cancel"),
    path("matches/same-device/", views.same_device_create, name="same_device_create"),
    path("matches/computer/", views.computer_create, name="computer_create"),
    path("matches/<int:match_id>/", views.match_page, name="match"),
    path("api/matches/live/", views.api_live_matches, name="api_live"),
    path("api/matches/same-device/", views.api_same_device_create, name="api_same_device"),
    path("api/matches/computer/", views.api_computer_create, name="api_computer"),
    path("api/matches/<int:match_id>/state/", views.api_match_state, name="api_state"),
    path("api/invites/", views.api_invite_create, name="api_invite_create"),
    path("api/invites/<str:code>/accept/", views.api_invite_accept, name="api_invite_accept"),
]

urlpatterns += queue_urls.urlpatterns  # ranked queue and rematch
