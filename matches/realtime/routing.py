from django.urls import path

from matches.realtime import echo, lobby_consumer
from matches.realtime import match_consumer as consumers

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/", consumers.MatchConsumer.as_asgi()),
    path("ws/lobby/", lobby_consumer.LobbyConsumer.as_asgi()),
    # The load harness's echo baseline; refused unless BENCH_ECHO is on (matches/realtime/echo.py).
    path("ws/echo/<slug:room>/", echo.EchoConsumer.as_asgi()),
]
