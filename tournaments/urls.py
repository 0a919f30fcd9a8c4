from django.urls import path

from . import views

app_name = "tournaments"

ACTIONS = ("join", "withdraw", "pause")

urlpatterns = [
    path("tournaments/", views.arena_list, name="list"),
    path("tournaments/<int:arena_id>/", views.arena_page, name="arena"),
    path("api/tournaments/", views.api_arenas, name="api_list"),
    path("api/tournaments/<int:arena_id>/", views.api_arena, name="api_arena"),
    path("api/tournaments/matches/<int:match_id>/berserk/", views.berserk, name="api_berserk"),
]
# One route per action (the page's forms and the API): any other word is a 404.
for _action in ACTIONS:
    urlpatterns += [
        path(
            f"tournaments/<int:arena_id>/{_action}/",
            views.arena_action,
            {"action": _action},
            name=f"action_{_action}",
        ),
        path(
            f"api/tournaments/<int:arena_id>/{_action}/",
            views.api_arena_action,
            {"action": _action},
            name=f"api_{_action}",
        ),
    ]
