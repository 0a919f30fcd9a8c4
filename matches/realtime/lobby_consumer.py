"""The lobby WebSocket (``/ws/lobby/``): the ranked queue's live view and presence.

Thin like ``MatchConsumer``: every change goes through ``matches.lobby.matchmaking``.

Client → server (JSON): ``{"op": "join"}``, ``{"op": "leave"}``,
``{"op": "status"}`` and ``{"op": "ping"}`` (presence).

Server → client (JSON):

- ``{"type": "queue", "in_queue": bool, "joined_at": ms | None, "waited_ms": ...,
  "window": 150 | None, "window_text": "±150", "rating": 1500, "server_now": ms,
  "schedule": {"start": 100, "step": 50, "every_s": 10, "unbounded_after_s": 60}}``
  on connect and whenever the player's queue state changes (any tab, any process);
- ``{"type": "paired", "match_id": 42, "url": "/matches/42/"}``: go there now (also
  on connect, for a ranked match made while the socket was closed that still waits
  for this player's 開始);
- ``{"type": "error", "code": "busy", "message": "..."}``;
- ``{"type": "notification", ...}`` and ``{"type": "challenge_closed", "id": 7}``
  from ``social`` (group message ``lobby.frame``; docs/protocol.md).

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

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from matches import signals
from matches.clock import metrics
from matches.lobby import matchmaking as queue
from matches.play import admission, db, dbpool
from matches.realtime import broadcast, budgets, periodic
from matches.realtime.base import LayerSafe, language_of, parse_json, refuse
from matches.realtime.session_sockets import ClosedWithSession
from matches.realtime.socket_auth import (
    CLOSE_FORBIDDEN,
    CLOSE_TRY_LATER,
    CLOSE_UNAUTHENTICATED,
    origin_allowed,
    scope_user,
)
from matches.realtime.token_sockets import (
    ClosedOnRevoke,  # a bot token's sockets close when it is revoked
)

PRESENCE_EVERY_S = 10.0
MAX_FRAME_BYTES = 1024


class LobbyConsumer(ClosedOnRevoke, ClosedWithSession, LayerSafe, AsyncWebsocketConsumer):
    group: str
    language: str
    _presence: asyncio.Task[None] | None = None

    user: Any
    in_queue = False  # as last sent: presence is stamped only while queued
    frame_budget: budgets.FrameBudget

    async def connect(self) -> None:
        broadcast.bind_loop(asyncio.get_running_loop())
        periodic.ensure_started()
        if not origin_allowed(self.scope):
            await refuse(self, CLOSE_FORBIDDEN)
            return
        if not admission.admit("lobby_socket"):
            await refuse(self, CLOSE_TRY_LATER)  # saturated: the page retries with jitter
            return
        with dbpool.lane(dbpool.BACKGROUND):  # after match sockets' work
            self.user = await db.run(scope_user, self.scope)
        if self.user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.language = language_of(self.scope)
        self.group = queue.lobby_group(self.user.pk)
        try:
            await self.channel_layer.group_add(self.group, self.channel_name)
            session_holds = await self.watch_session(self.user)
        except Exception:
            del self.group
            await refuse(self, CLOSE_TRY_LATER)
            return
        if not await self.counted_if_held(session_holds):
            return
        self.frame_budget = budgets.FrameBudget()
        await self.accept()
        self.accepted = True
        metrics.track_socket(self, "lobby")
        await self._send_status(touch=True)
        paired = await db.run(queue.unstarted_pair, self.user)  # made while it was closed
        if paired is not None:
            await self.send(text_data=json.dumps(paired))
        await self._seen("connect")
        self._presence = asyncio.ensure_future(self._keep_presence())

    async def disconnect(self, code: int) -> None:
        metrics.untrack_socket(self)
        if self.counted:
            self.counted = False
            budgets.close_socket(self.user.pk)
        if self._presence is not None:
            self._presence.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._presence
        if hasattr(self, "group"):
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(self.group, self.channel_name)
            if self.in_queue:
                # The 30 s of absence are counted from here.
                await db.run(queue.touch, self.user)
            await self._seen("disconnect")

    async def _seen(self, event: str) -> None:
        # Who is online (social.presence listens); never fatal to the socket.
        with contextlib.suppress(Exception):
            await db.run(signals.lobby_seen.send, sender=LobbyConsumer, user_id=self.user.pk,
                         event=event)  # fmt: skip

    async def _keep_presence(self) -> None:
        # Only a queued player's presence matters (the sweep drops the absent):
        # an idle lobby socket costs no database write at all.
        while True:
            await asyncio.sleep(PRESENCE_EVERY_S)
            if self.in_queue:
                await db.run(queue.touch, self.user)
            await self._seen("tick")

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        verdict = self.frame_budget.judge()
        if verdict == "close":
            self.closed_by_server = True
            await self.close(code=budgets.CLOSE_FLOOD)
            return
        if verdict == "refuse":
            await self._send_error("rate_limited", self._t(budgets.FLOOD_MESSAGE))
            return
        if text_data is None or len(text_data) > MAX_FRAME_BYTES:
            await self._send_error("bad_request", self._t("That frame is not understood."))
            return
        try:
            frame = parse_json(text_data)
        except ValueError:
            frame = None
        op = frame.get("op") if isinstance(frame, dict) else None
        user = self.user
        if op == "ping":
            if self.in_queue:
                await db.run(queue.touch, user)
        elif op == "status":
            await self._send_status()
        elif op == "join":
            from matches.play.errors import ServiceError

            try:
                await db.run(_join, user, self.language)
            except ServiceError as e:
                await self._send_error(
                    e.code,
                    str(e.message),
                    match_id=e.match_id,
                    retry_at=getattr(e, "retry_at", None),
                )
            # The new state (or the pairing) arrives through the group after the commit.
        elif op == "leave":
            await db.run(queue.leave, user)
        else:
            await self._send_error("bad_request", self._t("Unknown operation."))

    def _t(self, message: str) -> str:
        with translation.override(self.language):
            return _(message)

    async def _send_status(self, *, touch: bool = False) -> None:
        status = await db.run(_status, self.user, touch)
        self.in_queue = bool(status["in_queue"])
        await self.send(text_data=json.dumps({"type": "queue", **status}))

    async def _send_error(
        self,
        code: str,
        message: str,
        *,
        match_id: int | None = None,
        retry_at: int | None = None,
    ) -> None:
        frame: dict[str, Any] = {"type": "error", "code": code, "message": message}
        if retry_at is not None:
            frame["retry_at"] = retry_at  # rate_limited, cooldown: when to try again
        if match_id is not None:
            frame["match_id"] = match_id
            frame["url"] = reverse("matches:match", args=[match_id])
        await self.send(text_data=json.dumps(frame))

    # --- group events (sent by matches.queue after a commit) ---------------------

    async def queue_update(self, event: dict[str, Any]) -> None:
        self.in_queue = bool(event["status"]["in_queue"])
        await self.send(text_data=json.dumps({"type": "queue", **event["status"]}))

    async def lobby_frame(self, event: dict[str, Any]) -> None:
        # A frame made elsewhere (social's notifications and challenges), sent as is.
        await self.send(text_data=json.dumps(event["frame"]))

    async def queue_paired(self, event: dict[str, Any]) -> None:
        frame = {"type": "paired", "match_id": event["match_id"], "url": event["url"]}
        await self.send(text_data=json.dumps(frame))


def _status(user: Any, touch: bool) -> dict[str, Any]:
    if touch:
        queue.touch(user)
    return queue.status_of(user)


def _join(user: Any, language: str) -> Any:
    with translation.override(language):
        return queue.join(user)
