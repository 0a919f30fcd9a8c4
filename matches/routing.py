from django.urls import path

from . import consumers, lobby_consumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/", consumers.MatchConsumer.as_asgi()),
    path("ws/lobby/", lobby_consumer.LobbyConsumer.as_asgi()),
]
