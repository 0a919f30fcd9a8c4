"""The match WebSocket: thin. Authenticate, stamp receipt time, call ``play.act``, forward frames.

``/ws/matches/<id>/`` speaks the JSON of docs/protocol.md; with ``?format=html``
the same socket sends server-rendered fragments for htmx's ws extension
instead of JSON state frames (client → server frames are JSON either way).

Cheap by design, because it runs for every move of every match:

- the receipt time is stamped before anything else, and hostile input (too
  large, not JSON, nested past any sense) is refused here without a database
  round trip;
- database work runs on the process's match threads (``matches.play.db``), never
  on the thread that serves HTTP views;
- a change reaches the socket as the JSON text made once for its audience
  (``matches.play.audience.Change.frame``): a JSON socket sends it as it is; an HTML
  socket renders its fragments and sends only those that changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import translation
from django.utils.translation import gettext as _

import engine
from matches.clock import liveness, metrics, presence
from matches.clock.outage import rejoin
from matches.models import Match
from matches.play import admission, db, dbpool, late_push, stages, timing
from matches.play.act import PUSH_BOUND_MS, Outcome, act
from matches.play.audience import audience_of, state_frame, view_for
from matches.play.compiled import OneRow
from matches.play.errors import ServiceError
from matches.play.frames import REMATCH_OPS
from matches.play.store import current_view
from matches.realtime import broadcast, budgets, catchup, periodic, protocol_v2
from matches.realtime.base import LayerSafe, frame_too_large, language_of, parse_json, refuse
from matches.realtime.protocol_v2 import DeltaEncoder
from matches.realtime.session_sockets import ClosedWithSession, session_holds
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

log = logging.getLogger(__name__)


class MatchConsumer(ClosedOnRevoke, ClosedWithSession, LayerSafe, AsyncWebsocketConsumer):
    match_id: int
    audience: str
    html: bool
    language: str
    user: Any
    # What this socket was last sent: the version, and (HTML) each fragment and the record.
    sent_version: int = -1
    delta: DeltaEncoder | None = None  # a version-2 socket's encoder
    _stamped_at: int | None = None
    sent_fragments: dict[str, str]
    events: list[dict[str, Any]]
    counted: bool = False  # in matches.realtime.budgets' count of sockets (and spectators)
    seats: list[int]
    # When this socket was pushed the view that made its seat the one to act (epoch ms):
    # our push's lateness is given back when it acts (matches.play.act.credit_late_push).
    # 0: it learnt it otherwise (a sync, a stale answer: nothing is owed). Its first
    # view counts as a push from ``opened_at``, the handshake's arrival: a turn that
    # began while we were opening the socket waited for us (in a reconnect wave, for
    # seconds), a turn older than the socket owes only our handshake's own time.
    # Kept until a view shows the seat not to act: a change that leaves it to act (a
    # credit, its own flag) is not a new turn, or a client could flag its way to more.
    turn_pushed_at: int | None = None
    turn_from: int | None = None  # the credit's earliest start (``opened_at`` for the first view)
    opened_at: int | None = None
    frame_budget: budgets.FrameBudget

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        # Stamped where the transport read the handshake (matches/clock/receipt.py), if it was.
        stamped = message.get("received_at")
        self.opened_at = stamped if isinstance(stamped, int) else timing.now_ms()
        await super().websocket_connect(message)

    async def connect(self) -> None:
        # Counted while it opens: many at once is a reconnect wave, and new matches
        # wait until it has passed (matches.play.admission).
        with admission.opening_socket():
            await self._connect()

    async def _connect(self) -> None:
        broadcast.bind_loop(asyncio.get_running_loop())
        periodic.ensure_started()  # heartbeats and, embedded, the sweeper: realtime/periodic.py
        if not origin_allowed(self.scope):
            await refuse(self, CLOSE_FORBIDDEN)
            return
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        with dbpool.lane(dbpool.HANDSHAKE):  # a live match's frames go first
            found = await db.run(_open, self.scope, self.match_id)
        if found is None:
            await refuse(self, CLOSE_UNAUTHENTICATED)
            return
        self.user, audience = found
        if audience is None:
            await refuse(self, CLOSE_FORBIDDEN)
            return
        if audience == "watch" and not admission.admit("watch_socket"):
            await refuse(self, CLOSE_TRY_LATER)  # a seat's socket is never refused
            return
        self.audience = audience
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.html = query.get("format", ["json"])[0] == "html"
        # The version the page was drawn at (match.html's ws-connect URL): a page that
        # connects showing the current version is not sent again what it shows.
        seen = query.get("seen", [""])[0]
        # ASCII digits only: "²" is a digit to str.isdigit() but not to int().
        ok = seen.isascii() and seen.isdigit() and len(seen) < 10
        self.page_version = int(seen) if ok else None
        # JSON version 2: state frames as deltas (matches/realtime/protocol_v2.py); 1 by default.
        self.delta = None if self.html or not protocol_v2.wants_v2(query) else DeltaEncoder()
        self.language = language_of(self.scope)
        self.sent_fragments = {}
        self.events = []
        try:
            await self.channel_layer.group_add(
                broadcast.group_name(self.match_id, self.audience), self.channel_name
            )
            # The session is confirmed in the first view's call (_first_view).
            await self.watch_session(self.user, confirm=False)
        except Exception:
            # The channel layer (Redis) is unreachable: no pushes could reach this
            # socket. Say so with a close code the page retries on, never a 500.
            await refuse(self, CLOSE_TRY_LATER)
            return
        too_many = budgets.open_socket(self.user.pk, watching_match=self._watched())
        if too_many is not None:
            await refuse(self, too_many)
            return
        self.counted = True
        self.frame_budget = budgets.FrameBudget()
        # The view is read once the group is joined, so no change falls between the
        # two: one committed before the read is in the view, one committed after
        # reaches this socket through the group (its pushes wait until connect
        # returns, and those of versions the view has are skipped). After a web
        # process dies every socket reconnects while play goes on, and a seat left
        # on an old view would wait with its clock running. This process holds the
        # seat's socket now (matches/clock/presence.py: if it dies, the seat's way
        # back through another process is given back to it).
        seats = self.seats = presence.seats_of_audience(audience)
        with dbpool.lane(dbpool.HANDSHAKE):
            holds, view = await db.run(
                _first_view,
                self.scope,
                self.match_id,
                self.user,
                audience,
                seats,
                self.channel_name,
            )
        if not holds:
            await refuse(self, CLOSE_UNAUTHENTICATED)  # it ended while this socket opened
            return
        if view is None:
            await refuse(self, CLOSE_FORBIDDEN)  # it was deleted while this socket opened
            return
        await self.accept()
        self.accepted = True
        metrics.track_socket(self, "watch" if audience == "watch" else "match")
        catchup.track(self)  # a push that never reaches it is made good (realtime/catchup.py)
        # A (re)connection gets the whole current view.
        await self._send_view(view)
        self._note_turn(view.get("to_act"), pushed=True, since=self.opened_at)
        credit = view["match"].get("credit") or {}
        if credit.get("rejoin_until") and view.get("to_act") in seats:
            # Back after our outage, perhaps the seat whose decision it cut: the time
            # until now is given back (a new version, pushed: its clock reads right),
            # and the seat stays held until its first action, given the time since: at
            # 200 matches a view sent in the reconnect wave reached its player up to
            # 15 s later (our loop's backlog, the proxy's queue), and a hold ended at
            # the handshake charged that (1.1–1.8 million ms in a drill). A seat not to
            # act has nothing to be given yet (its decision, if it comes while it is
            # held, is given at its first action): its row is not locked for nothing,
            # half of a reconnect wave's 1,000 locks at 500 matches.
            await db.run(functools.partial(rejoin, hold=True), self.match_id, self.user)

    def _watched(self) -> int | None:
        return self.match_id if self.audience == "watch" else None

    async def disconnect(self, code: int) -> None:
        metrics.untrack_socket(self)
        catchup.untrack(self)
        if self.accepted and hasattr(self, "audience"):
            with contextlib.suppress(Exception):
                await db.run(
                    functools.partial(presence.gone, socket=self.channel_name),
                    self.match_id,
                    self.seats,
                )
        if self.counted:
            self.counted = False
            budgets.close_socket(self.user.pk, watching_match=self._watched())
        if hasattr(self, "audience"):
            # If the layer is gone, its group entries expire by themselves.
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(
                    broadcast.group_name(self.match_id, self.audience), self.channel_name
                )

    async def websocket_receive(self, message: dict[str, Any]) -> None:
        # Stamped where the transport read it (matches/clock/receipt.py), if it was.
        self._stamped_at = message.get("received_at")
        try:
            await super().websocket_receive(message)
        finally:
            # A refused frame's marks must not be taken up by a later change made in
            # this socket's context (its seat going away, say): stages.begin() again.
            stages.end()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # The rules time every action on receipt: as the transport read it, else now.
        stamped, self._stamped_at = self._stamped_at, None
        stages.begin()  # where this frame's time goes from here (sb_move_stage_seconds)
        received_at = stamped if isinstance(stamped, int) else timing.now_ms()
        verdict = self.frame_budget.judge()
        if verdict != "ok":
            await self._over_budget(verdict)
            return
        if text_data is None:
            await self._send_error("bad_request", self._t("Frames are JSON text."))
            return
        if frame_too_large(text_data):
            await self._send_error("too_large", self._t("That frame is too large."))
            return
        try:
            frame = parse_json(text_data)
        except ValueError:
            await self._send_error("bad_request", self._t("That frame is not JSON."))
            return
        op = frame.get("op") if isinstance(frame, dict) else None
        if self.audience == "watch":
            # A spectator may only ask for the current view; nothing it sends changes the match.
            if op == "sync":
                await self._send_current()
            else:
                await self._send_error("not_a_player", self._t("You are watching this match."))
            return
        try:
            if op in REMATCH_OPS:
                outcome = await db.run(_rematch, self.match_id, self.user, op, self.language)
            else:
                outcome = await db.run(
                    _act,
                    self.match_id,
                    self.user,
                    frame,
                    received_at,
                    self.language,
                    self.turn_pushed_at or None,
                    liveness.stopped_at_ms is not None,  # this process is shutting down
                    self.turn_from,
                )
        except ServiceError as e:
            await self._send_error(e.code, e.message, version=e.version)
            if e.code in ("stale", "match_over", "not_started"):
                await self._send_current()
            return
        if outcome.change is not None:
            metrics.observe_move((timing.now_ms() - received_at) / 1000)
        if outcome.error is not None:
            e = outcome.error
            await self._send_error(e.code, e.message, version=outcome.match.version)
        if op == "sync":
            view = view_for(outcome.match, outcome.state, self.audience, timing.now_ms())
            await self._send_view(view, force=True)
            self._note_turn(view.get("to_act"), pushed=False)
        # Everything else reaches this socket through its group after the commit.

    async def _over_budget(self, verdict: str) -> None:
        """Frames past this socket's budget are not read (matches.realtime.budgets)."""
        if verdict == "close":
            self.closed_by_server = True
            await self.close(code=budgets.CLOSE_FLOOD)
        else:
            await self._send_error("rate_limited", self._t(budgets.FLOOD_MESSAGE))

    def _t(self, message: str) -> str:
        with translation.override(self.language):
            return _(message)

    # --- sending ---------------------------------------------------------------

    async def match_frame(self, event: dict[str, Any]) -> None:
        """A committed change, pushed by ``realtime.broadcast`` to this socket's audience."""
        if isinstance(event.get("t"), int):  # how long the change took to reach us
            admission.note_push_delay(timing.now_ms() - event["t"])
        try:
            if event["version"] > self.sent_version:  # else a newer full view went out already
                after = event.get("after")
                if after is not None:
                    await after.wait()  # the seat to act's socket first (broadcast.UrgentFirst)
                await self._push(event)
        finally:
            opens = event.get("opens")
            if opens is not None:
                opens.open()

    async def _push(self, event: dict[str, Any]) -> None:
        if event["version"] <= self.sent_version:
            return  # a full view of a newer version went out meanwhile
        if not self.html:
            self.sent_version = event["version"]
            if self.delta is not None:
                await self.send(text_data=self.delta.frame(broadcast.frame_view(event)))
            else:
                await self.send(text_data=broadcast.frame_text(event, self.audience))
        else:
            # One process hands the view itself over (a shallow copy: _send_view adds events).
            await self._send_view(broadcast.frame_view(event))
        began = event.get("t") if isinstance(event.get("t"), int) else None
        self._note_turn(event.get("to_act"), pushed=True, began=began)

    def _note_turn(
        self,
        to_act: Any,
        *,
        pushed: bool,
        since: int | None = None,
        began: int | None = None,
        late: bool = False,
    ) -> None:
        """This socket was just sent a view: note when its seat's turn reached it (and,
        ``since``, from when at the earliest the wait was ours).

        A turn that came late (past the bound since ``began``, the change's receipt, or
        ``since``; ``late``: a catch-up's) is noted on Redis too: if this socket dies before
        its seat acts, whoever gives the seat its time back gives this first
        (``matches.play.late_push``)."""
        if to_act not in self.seats:
            self.turn_pushed_at = self.turn_from = None
        elif self.turn_pushed_at is None:
            now = timing.now_ms()
            self.turn_pushed_at = now if pushed else 0
            self.turn_from = since
            earliest = since if since is not None else began
            if pushed and (late or (earliest is not None and now - earliest > PUSH_BOUND_MS)):
                late_push.note_soon(self.match_id, [to_act], now, since)

    async def catch_up(self) -> None:
        """A push of a version this socket should have seen never came: the current view
        (in place of the push, late: a turn it brings is noted as pushed now)."""
        await self._send_current(pushed=True)

    async def _send_current(self, *, pushed: bool = False) -> None:
        found = await db.run(_current, self.match_id, self.user, self.audience)
        if found is not None:
            await self._send_view(found, force=True)
            self._note_turn(found.get("to_act"), pushed=pushed, late=pushed)

    async def _send_view(self, view: dict[str, Any], *, force: bool = False) -> None:
        version = view["match"]["version"]
        if version < self.sent_version or (version == self.sent_version and not force):
            return
        self.sent_version = version
        if not self.html:
            if self.delta is not None:  # a whole view (connect, sync): whole in version 2 too
                await self.send(text_data=self.delta.frame(view, whole=True))
                return
            await self.send(text_data=state_frame(view))
            return
        view["events"] = self._merge_events(view)
        from matches.ui import audience_render, fragments
        from matches.ui.fragments import render_changed

        with translation.override(self.language):
            if self.audience == "watch":  # the same page for every spectator: rendered once
                html = audience_render.changed(
                    self.match_id, view, self.language, self.sent_fragments
                )
            else:
                # The first frame to a page drawn at this very version: only the parts
                # drawn from the server's clock (the rest would be swapped for itself:
                # Lighthouse's longest task on the match page, 80 ms of a phone's CPU).
                fresh = not self.sent_fragments and self.page_version == version
                only = fragments.TIMED if fresh else None
                html = render_changed(view, self.sent_fragments, only=only)
        if html:
            await self.send(text_data=html)

    def _merge_events(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        """The recent events for the page's record: a pushed view carries only the new ones."""
        new = view.get("events") or []
        if view.get("events_after") is None:
            self.events = list(new)
        else:
            last = self.events[-1]["seq"] if self.events else None
            if last is not None and view["events_after"] > last:
                # Events were missed (a push lost on the way): the record restarts here.
                self.events = []
            self.events = [e for e in self.events if e["seq"] <= view["events_after"]] + new
        del self.events[: -engine.LOG_SIZE]  # what an HTML page's record shows
        return self.events

    async def _send_error(self, code: str, message: str, *, version: int | None = None) -> None:
        if self.html:
            from matches.ui.fragments import render_error

            with translation.override(self.language):
                await self.send(text_data=render_error(code, message))
        else:
            frame = {"type": "error", "code": code, "message": message, "version": version}
            await self.send(text_data=json.dumps(frame))


# --- on the database threads ---------------------------------------------------------


def _open(scope: dict[str, Any], match_id: int) -> tuple[Any, str | None] | None:
    """The socket's user and its audience (``None``: no such match), from the match's
    seats alone (its view is read once the socket has joined its group).

    Anyone logged in who holds no seat watches: the spectators' audience.
    """
    user = scope_user(scope)
    if user is None:
        return None
    m = _seats_row(match_id)
    return user, None if m is None else audience_of(m, user.pk)


_seats_row = OneRow(lambda pk: Match.objects.filter(pk=pk).only("kind", "player0", "player1"), int)


def _first_view(
    scope: dict[str, Any], match_id: int, user: Any, audience: str, seats: list[int], socket: str
) -> tuple[bool, dict[str, Any] | None]:
    """Whether the socket's session still holds now that it joined its user's group, and
    if so its first full view (``None``: the match is gone); its seats are noted as held
    by this process."""
    if not session_holds(scope, user.pk):
        return False, None
    if seats:
        presence.here(match_id, seats, timing.now_ms(), socket=socket)
    return True, _current(match_id, user, audience)


def _current(match_id: int, user: Any, audience: str) -> dict[str, Any] | None:
    try:
        return current_view(match_id, user, watch=audience == "watch")[1]
    except ServiceError:
        return None


def _act(
    match_id: int,
    user: Any,
    frame: Any,
    received_at: int,
    language: str,
    turn_pushed_at: int | None = None,
    leaving: bool = False,
    turn_from: int | None = None,
) -> Outcome:
    with translation.override(language):
        return act(
            match_id,
            user,
            frame,
            received_at,
            turn_pushed_at=turn_pushed_at,
            leaving=leaving,
            turn_from=turn_from,
        )


def _rematch(match_id: int, user: Any, op: str, language: str) -> Outcome:
    from matches.lobby.rematch import act_rematch

    with translation.override(language):
        return act_rematch(match_id, user, op)


__all__ = ["MatchConsumer"]
