from django.urls import path

from matches.api import urls as api_urls
from matches.lobby import urls as lobby_urls

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
]

urlpatterns += lobby_urls.urlpatterns  # the ranked queue and rematch
urlpatterns += api_urls.urlpatterns  # the JSON API
