from django.urls import path

from . import api, views

app_name = "social"

urlpatterns = [
    path("api/challenges/", api.challenges_view, name="api_challenges"),
    path("api/challenges/<int:challenge_id>/accept/", api.challenge_op, {"op": "accept"}),
    path("api/challenges/<int:challenge_id>/decline/", api.challenge_op, {"op": "decline"}),
    path("api/challenges/<int:challenge_id>/cancel/", api.challenge_op, {"op": "cancel"}),
    path("api/follows/", api.follows_view, name="api_follows"),
    path("api/follows/<str:username>/", api.follow_delete),
    path("api/blocks/", api.blocks_view, name="api_blocks"),
    path("api/blocks/<str:username>/", api.block_delete),
    path("api/notifications/", api.notifications_view, name="api_notifications"),
    path("api/notifications/read/", api.notifications_read),
    path("api/presence/", api.presence_view, name="api_presence"),
    path("api/push/", api.push_view, name="api_push"),
    path("challenges/", views.challenge, name="challenge"),
    path("challenges/<int:challenge_id>/accept/", views.challenge_op, {"op": "accept"},
         name="accept"),
    path("challenges/<int:challenge_id>/decline/", views.challenge_op, {"op": "decline"},
         name="decline"),
    path("challenges/<int:challenge_id>/cancel/", views.challenge_op, {"op": "cancel"},
         name="cancel"),
    path("follow/", views.relation, {"op": "follow"}, name="follow"),
    path("unfollow/", views.relation, {"op": "unfollow"}, name="unfollow"),
    path("block/", views.relation, {"op": "block"}, name="block"),
    path("unblock/", views.relation, {"op": "unblock"}, name="unblock"),
    path("notifications/", views.notifications, name="notifications"),
    path("notifications/toast/", views.toast, name="toast"),
    path("friends/", views.friends_fragment, name="friends"),
]  # fmt: skip

from . import settings_views  # noqa: E402

urlpatterns += [
    path("settings/", settings_views.settings_page, name="settings"),
    path("settings/export/", settings_views.export_view, name="export"),
    path("settings/delete/", settings_views.delete_view, name="delete"),
]

from . import report_views  # noqa: E402

urlpatterns += [
    path("u/<str:username>/report/", report_views.report_player, name="report_player"),
    path("matches/<int:match_id>/report/", report_views.report_match, name="report_match"),
]
