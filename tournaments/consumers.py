"""The arena socket (``/ws/tournaments/<id>/``): live standings, your pairing, presence.

Server → client (JSON):

- ``{"type": "standings", "arena": {...}, "standings": [rows], "count": n}`` on
  connect and at most about once a second while the table changes: the top
  :data:`tournaments.push.TOP_ROWS` rows and the player's own row;
- ``{"type": "you", "you": {...} | null}`` when the player's own state changes;
- ``{"type": "paired", "match_id": 42, "url": "/matches/42/"}``: go there now.

With ``?bar=1`` (the arena bar on an arena match's page) the socket is sent only
``you`` and ``paired``: the bar draws no table, and at 500 players the table
was 8 KB a second to every player in a match, written on the loop the moves
share (issue 19).

Client → server: ``{"op": "ping"}`` (presence). Presence is also stamped on
connect, every :data:`PRESENCE_EVERY_S` while the socket is open (for all the
process's arena sockets at once) and on disconnect; a waiting player whose
sockets have all been gone for the grace period (``ARENA_PAUSE_GRACE_S``) is
paused by the next pairing pass. The match page of an arena match opens this
socket too (as the bar), so playing keeps you present.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import translation
from django.utils.translation import gettext as _

from matches.play import db, dbpool
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
    ClosedOnRevoke,  # a bot token's sockets close when it is revoked (docs/protocol.md §5)
)

from . import push, services, standings
from .models import Arena

PRESENCE_EVERY_S = 10.0
MAX_FRAME_BYTES = 1024  # the lobby socket's bound: its only frame, a ping, is a dozen bytes

log = logging.getLogger(__name__)

# The arena sockets this process holds: arena id -> user id -> how many. Their presence
# is refreshed for all of them at once, one UPDATE an arena every PRESENCE_EVERY_S (a
# timer a socket made 500 writes every 10 s at 500 players, each in line with the
# moves on the embedded default's one SQLite match thread).
_held: dict[int, Counter[int]] = defaultdict(Counter)
_refresher: tuple[asyncio.AbstractEventLoop, asyncio.Task[None]] | None = None


def held() -> dict[int, list[int]]:
    """The players whose arena sockets this process holds, by arena."""
    return {arena: sorted(users) for arena, users in _held.items() if users}


async def _refresh_presence() -> None:
    while True:
        await asyncio.sleep(PRESENCE_EVERY_S)
        now_held = held()
        if not now_held:
            continue
        try:
            with dbpool.lane(dbpool.BACKGROUND):
                await db.run(services.touch_many, now_held)
        except Exception:  # the next beat tries again; a missed one costs nothing yet
            log.exception("arena presence refresh failed")


def _ensure_refresher() -> None:
    global _refresher
    loop = asyncio.get_running_loop()
    if _refresher is None or _refresher[0] is not loop or _refresher[1].done():
        _refresher = (loop, loop.create_task(_refresh_presence()))


def _initial(arena_id: int, user_id: int, table: bool = True) -> dict[str, Any] | None:
    """What a socket is sent on connect: the table (unless ``table`` is false: the bar's)
    and the player's own state."""
    if not Arena.objects.filter(pk=arena_id).exists():
        return None
    services.touch(arena_id, user_id)
    return {**(standings.table(arena_id) if table else {}), "you": standings.you(arena_id, user_id)}


def cut(table: dict[str, Any], username: str) -> dict[str, Any]:
    """The table as one socket gets it: the top rows and the player's own row."""
    rows = table["standings"]
    top = rows[: push.TOP_ROWS]
    mine = next((r for r in rows[push.TOP_ROWS :] if r["username"] == username), None)
    return {
        "type": "standings",
        "arena": table["arena"],
        "standings": top + ([mine] if mine else []),
        "count": len(rows),
    }


class Encoded:
    """One push of the table, encoded once for all of an arena's sockets.

    Every socket gets the same top rows; only a player below them adds their own row.
    The text is ``json.dumps(cut(table, username))``, but the top rows are encoded once a
    push instead of once a socket: at 500 players the per-socket encoding was a tenth
    of the web process's loop, all of it in one burst a second (the arena's moves waited
    behind it).
    """

    def __init__(self, table: dict[str, Any]) -> None:
        rows = table["standings"]
        self.head = '{"type": "standings", "arena": ' + json.dumps(table["arena"])
        self.head += ', "standings": [' + json.dumps(rows[: push.TOP_ROWS])[1:-1]
        self.below = {r["username"]: r for r in rows[push.TOP_ROWS :]}
        self.tail = '], "count": ' + json.dumps(len(rows)) + "}"
        self.joiner = ", " if rows[: push.TOP_ROWS] else ""

    def text(self, username: str) -> str:
        mine = self.below.get(username)
        if mine is None:
            return self.head + self.tail
        return self.head + self.joiner + json.dumps(mine) + self.tail


_encoded: dict[int, tuple[Any, Encoded]] = {}  # arena id -> (push version, its encoding)


def encoded(event: dict[str, Any]) -> Encoded:
    """The encoding of a standings push, shared by the sockets of its arena (one a
    process: each socket's copy of the message, from Redis, carries the same version)."""
    arena_id, version = event["arena"]["id"], event.get("version")
    hit = _encoded.get(arena_id)
    if version is not None and hit is not None and hit[0] == version:
        return hit[1]
    made = Encoded(event)
    if version is not None:
        _encoded.pop(arena_id, None)
        _encoded[arena_id] = (version, made)
        while len(_encoded) > 8:  # the arenas running now; a finished one falls out
            _encoded.pop(next(iter(_encoded)))
    return made


class ArenaConsumer(ClosedOnRevoke, ClosedWithSession, LayerSafe, AsyncWebsocketConsumer):
    """Closed as the match and lobby sockets are: 4401 when its session ends (logout,
    password change, deactivation) or its bot token is revoked; one of the account's
    sockets (``budgets.open_socket``), its frames under the same budget."""

    groups_joined: list[str]
    present: bool = False  # counted in _held
    user: Any
    arena_id: int
    frame_budget: budgets.FrameBudget

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # The arena page's reads and presence stamps wait behind live matches' frames
        # on the match threads (with one thread on SQLite, 500 players' stamps every
        # 10 s went in line with the moves, at the same priority).
        with dbpool.lane(dbpool.BACKGROUND):
            await super().__call__(scope, receive, send)

    async def connect(self) -> None:
        broadcast.bind_loop(asyncio.get_running_loop())
        periodic.ensure_started()
        if not origin_allowed(self.scope):
            await refuse(self, CLOSE_FORBIDDEN)
            return
        self.user = await db.run(scope_user, self.scope)
        if self.user is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.arena_id = int(self.scope["url_route"]["kwargs"]["arena_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        bar = query.get("bar") == ["1"]
        # The groups are joined before the first read, so no change falls between the
        # two: a pairing committed before the read is in ``you``, one committed after
        # is pushed to this socket (its pushes wait until connect returns). A page
        # reloaded just after 参加 was paired while its socket reconnected, and stayed.
        self.groups_joined = []
        groups = [push.user_group(self.arena_id, self.user.pk)]
        if not bar:
            groups.insert(0, push.arena_group(self.arena_id))
        try:
            for g in groups:
                await self.channel_layer.group_add(g, self.channel_name)
                self.groups_joined.append(g)
            session_holds = await self.watch_session(self.user)
        except Exception:
            await refuse(self, CLOSE_TRY_LATER)
            return
        if not await self.counted_if_held(session_holds):
            return
        first = await db.run(_initial, self.arena_id, self.user.pk, not bar)
        if first is None:
            await refuse(self, CLOSE_FORBIDDEN)
            return
        self.frame_budget = budgets.FrameBudget()
        await self.accept()
        self.accepted = True
        if not bar:
            await self.send(text_data=json.dumps(cut(first, self.user.username)))
        await self.send(text_data=json.dumps({"type": "you", "you": first["you"]}))
        _held[self.arena_id][self.user.pk] += 1
        self.present = True
        _ensure_refresher()

    async def disconnect(self, code: int) -> None:
        if self.counted:
            self.counted = False
            budgets.close_socket(self.user.pk)
        if self.present:
            self.present = False
            users = _held[self.arena_id]
            users[self.user.pk] -= 1
            if users[self.user.pk] <= 0:
                del users[self.user.pk]
            if not users:
                del _held[self.arena_id]
        for g in getattr(self, "groups_joined", []):
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(g, self.channel_name)
        if self.accepted:
            await db.run(services.touch, self.arena_id, self.user.pk)  # the grace starts now

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # The frame budget of the match and lobby sockets (docs/protocol.md § Limits): a
        # ping is a database write, and a flood of them was one write a frame.
        verdict = self.frame_budget.judge()
        if verdict == "close":
            await self.close(code=budgets.CLOSE_FLOOD)
            return
        if verdict == "refuse":
            await self._send_error("rate_limited", budgets.FLOOD_MESSAGE)
            return
        if text_data is None or len(text_data) > MAX_FRAME_BYTES:
            await self._send_error("bad_request", "That frame is not understood.")
            return
        try:
            frame = parse_json(text_data)
        except ValueError:
            frame = None
        if not isinstance(frame, dict):
            await self._send_error("bad_request", "That frame is not understood.")
        elif frame.get("op") == "ping":
            await db.run(services.touch, self.arena_id, self.user.pk)
        else:
            await self._send_error("bad_request", "Unknown operation.")

    async def _send_error(self, code: str, message: str) -> None:
        """The error frame of the other sockets (docs/protocol.md): the frame changed nothing."""
        with translation.override(language_of(self.scope)):
            text = _(message)
        await self.send(text_data=json.dumps({"type": "error", "code": code, "message": text}))

    # --- group events (tournaments.push) ----------------------------------------

    async def arena_standings(self, event: dict[str, Any]) -> None:
        await self.send(text_data=encoded(event).text(self.user.username))

    async def arena_you(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps({"type": "you", "you": event["you"]}))

    async def arena_paired(self, event: dict[str, Any]) -> None:
        frame = {"type": "paired", "match_id": event["match_id"], "url": event["url"]}
        await self.send(text_data=json.dumps(frame))
