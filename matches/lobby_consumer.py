"""The lobby WebSocket (``/ws/lobby/``): the ranked queue's live view and presence.

Thin like ``MatchConsumer``: every change goes through ``matches.queue``.

Client → server (JSON): ``{"op": "join"}``, ``{"op": "leave"}``,
``{"op": "status"}`` and ``{"op": "ping"}`` (presence).

Server → client (JSON):

- ``{"type": "queue", "in_queue": bool, "joined_at": ms | None, "waited_ms": ...,
  "window": 150 | None, "window_text": "±150", "rating": 1500, "server_now": ms,
  "schedule": {"start": 100, "step": 50, "every_s": 10, "unbounded_after_s": 60}}``
  on connect and whenever the player's queue state changes (any tab, any process);
- ``{"type": "paired", "match_id": 42, "url": "/matches/42/"}``: go there now;
- ``{"type": "error", "code": "busy", "message": "..."}``.

Presence: ``last_seen`` is stamped on connect, every :data:`PRESENCE_EVERY_S`
while the socket is open (from the server, so a throttled background tab still
counts), on ``ping`` and on disconnect; the queue sweep drops a player whose
lobby connection has been gone for 30 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import translation
from django.utils.translation import gettext as _

from . import periodic, queue, timers
from .consumers import CLOSE_UNAUTHENTICATED, _language

PRESENCE_EVERY_S = 10.0
MAX_FRAME_BYTES = 1024


class LobbyConsumer(AsyncWebsocketConsumer):
    group: str
    language: str
    _presence: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        timers.bind_loop(asyncio.get_running_loop())
        periodic.ensure_started()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.language = _language(self.scope)
        self.group = queue.lobby_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await database_sync_to_async(queue.touch)(user)
        await self._send_status()
        self._presence = asyncio.ensure_future(self._keep_presence())

    async def disconnect(self, code: int) -> None:
        if self._presence is not None:
            self._presence.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._presence
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            # The 30 s of absence are counted from here.
            await database_sync_to_async(queue.touch)(self.scope["user"])

    async def _keep_presence(self) -> None:
        while True:
            await asyncio.sleep(PRESENCE_EVERY_S)
            await database_sync_to_async(queue.touch)(self.scope["user"])

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None or len(text_data) > MAX_FRAME_BYTES:
            await self._send_error("bad_request", self._t("That frame is not understood."))
            return
        try:
            frame = json.loads(text_data)
        except ValueError:
            frame = None
        op = frame.get("op") if isinstance(frame, dict) else None
        user = self.scope["user"]
        if op == "ping":
            await database_sync_to_async(queue.touch)(user)
        elif op == "status":
            await self._send_status()
        elif op == "join":
            from .services import ServiceError

            try:
                await database_sync_to_async(queue.join)(user)
            except ServiceError as e:
                with translation.override(self.language):
                    await self._send_error(e.code, str(e.message))
            # The new state (or the pairing) arrives through the group after the commit.
        elif op == "leave":
            await database_sync_to_async(queue.leave)(user)
        else:
            await self._send_error("bad_request", self._t("Unknown operation."))

    def _t(self, message: str) -> str:
        with translation.override(self.language):
            return _(message)

    async def _send_status(self) -> None:
        status = await database_sync_to_async(queue.status_of)(self.scope["user"])
        await self.send(text_data=json.dumps({"type": "queue", **status}))

    async def _send_error(self, code: str, message: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "code": code, "message": message}))

    # --- group events (sent by matches.queue after a commit) ---------------------

    async def queue_update(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps({"type": "queue", **event["status"]}))

    async def queue_paired(self, event: dict[str, Any]) -> None:
        frame = {"type": "paired", "match_id": event["match_id"], "url": event["url"]}
        await self.send(text_data=json.dumps(frame))
