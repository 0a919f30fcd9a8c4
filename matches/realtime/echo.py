"""The echo relay behind ``make bench-load``'s baseline: one ``group_send``, nothing else.

``/ws/echo/<room>/``: every socket in a room receives what any other socket in
it sends, relayed through the channel layer exactly as a move's view is
(``group_send`` to a group the receiving socket is in). The load harness times
that relay on the same Daphne and channel layer as the moves, so a move's
latency can be read against the floor the transport sets.

It is dispatched as the match sockets are (:class:`LayerSafe`: no thread hop per
message to close database connections, which Channels' own dispatch makes and
which was a quarter of the relay's CPU): the floor it measures is the one a
move's frames stand on.

Refused unless ``BENCH_ECHO`` is on (off by default): production does not relay
arbitrary text between sockets. Logged-in users only, like the match sockets.
"""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from matches.play import db
from matches.realtime.base import LayerSafe, refuse
from matches.realtime.socket_auth import (
    CLOSE_FORBIDDEN,
    CLOSE_UNAUTHENTICATED,
    origin_allowed,
    scope_user,
)

MAX_FRAME_CHARS = 4096


class EchoConsumer(LayerSafe, AsyncWebsocketConsumer):
    group: str

    async def connect(self) -> None:
        if not settings.BENCH_ECHO or not origin_allowed(self.scope):
            await refuse(self, CLOSE_FORBIDDEN)
            return
        # Authenticated as the match sockets are (realtime/socket_auth.py), on a match thread.
        if await db.run(scope_user, self.scope) is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.group = f"echo.{self.scope['url_route']['kwargs']['room']}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.accepted = True

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None or len(text_data) > MAX_FRAME_CHARS:
            return
        event = {"type": "echo.relay", "text": text_data, "sender": self.channel_name}
        await self.channel_layer.group_send(self.group, event)

    async def echo_relay(self, event: dict[str, Any]) -> None:
        if event["sender"] != self.channel_name:
            await self.send(text_data=event["text"])
