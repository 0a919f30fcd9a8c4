from django.urls import path, register_converter

from . import views


class _Action:
    regex = "join|withdraw|pause"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(_Action, "arena_action")


app_name = "tournaments"

urlpatterns = [
    path("tournaments/", views.arena_list, name="list"),
    path("tournaments/<int:arena_id>/", views.arena_page, name="arena"),
    path(
        "tournaments/<int:arena_id>/<arena_action:action>/",
        views.arena_action,
        name="action",
    ),
    path("api/tournaments/", views.api_arenas, name="api_list"),
    path("api/tournaments/<int:arena_id>/", views.api_arena, name="api_arena"),
    path("api/tournaments/matches/<int:match_id>/berserk/", views.berserk, name="api_berserk"),
    path(
        "api/tournaments/<int:arena_id>/<arena_action:action>/",
        views.api_arena_action,
        name="api_action",
    ),
]
