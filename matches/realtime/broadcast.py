"""Pushing committed changes to the sockets, through the channel layer.

Each audience of a match has its own group (``match.<id>.seat0``, ``seat1``,
``device`` or ``watch``) and receives only its own frame, made once by
``matches.play`` and carried as JSON text; a socket never gets a frame
meant for somebody else. Receivers of :data:`matches.signals.match_changed`
(connected in ``MatchesConfig.ready``):

- in a web process, the change was usually committed on a database thread
  while the event loop goes on serving sockets: the sends are handed to the
  loop without waiting for them, one match's changes in commit order;
- anywhere else (a Celery worker, a management command, a test calling the
  services directly) they are sent before the call returns.

A push is a courtesy, the database is the truth: a failed push is logged and
the match is marked so that the sweeper pushes it again (``needs_push``), and
a reconnecting socket always gets the whole current view.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from matches.play import db, jsontext, stages
from matches.realtime.layers import InMemoryLayer

log = logging.getLogger(__name__)

_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: int | None = None
# match id -> the task sending its latest change: the next one waits for it.
_chains: dict[int, asyncio.Future[None]] = {}


def group_name(match_id: int, audience: str) -> str:
    """``audience`` is ``seat0``, ``seat1``, ``device`` or ``watch``."""
    return f"match.{match_id}.{audience}"


# Changes committed before the loop runs, to push once it does (:func:`defer_until_bound`).
_deferred: list[Any] | None = None
_deferred_lock = threading.Lock()


def defer_until_bound() -> None:
    """This process is about to serve sockets on a loop not running yet (``config.serve``,
    before its start-up beat): changes committed until then are pushed from the loop
    once it runs, not one by one before it listens. A restart of the whole tier at 500
    matches credits the outage to every match first: 500 pushes, each on a loop of its
    own, held the process 1.7 s from listening (no socket of the tier is open then, so
    the pushes reach nobody sooner either way)."""
    global _deferred
    with _deferred_lock:
        if _loop is None:
            _deferred = []


def bind_loop(loop: asyncio.AbstractEventLoop) -> None:
    """This process serves sockets on ``loop``: hand pushes to it (consumers call this)."""
    global _loop, _loop_thread, _deferred
    with _deferred_lock:
        _loop = loop
        _loop_thread = threading.get_ident()
        pending, _deferred = _deferred or [], None
    for change in pending:
        loop.call_soon(_chain, change)


def on_match_changed(sender: Any, change: Any, **kwargs: Any) -> None:
    if _deferred is not None:
        with _deferred_lock:
            if _deferred is not None:
                _deferred.append(change)
                return
    loop = _loop
    if loop is not None and loop.is_running() and not loop.is_closed():
        if threading.get_ident() == _loop_thread:
            _chain(change)
        else:
            loop.call_soon_threadsafe(_chain, change)
        return
    try:
        async_to_sync(_send_change)(change)
    except Exception:
        log.exception("push of match %s failed; the sweeper will push it again", change.match_id)
        _mark_unpushed(change.match_id)


def _chain(change: Any) -> None:
    previous = _chains.get(change.match_id)
    task = asyncio.ensure_future(_send_after(previous, change))
    _chains[change.match_id] = task
    task.add_done_callback(lambda t: _forget(change.match_id, t))


def _forget(match_id: int, task: asyncio.Future[None]) -> None:
    if _chains.get(match_id) is task:
        del _chains[match_id]


async def _send_after(previous: asyncio.Future[None] | None, change: Any) -> None:
    if previous is not None:
        await asyncio.wait([previous])
    try:
        await _send_change(change)
    except Exception:
        log.exception("push of match %s failed; the sweeper will push it again", change.match_id)
        await db.run(_mark_unpushed, change.match_id)


async def _send_change(change: Any) -> None:
    marks = getattr(change, "marks", None)
    stages.mark("handed", marks)
    try:
        await _send_frames(change)
    finally:
        stages.mark("published", marks)
        stages.finish(marks)


async def _send_frames(change: Any) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    in_process = isinstance(layer, InMemoryLayer)
    sends: list[tuple[str, dict[str, Any]]] = []
    audiences: dict[str, str] = {}
    gate = UrgentFirst(_urgent_audience(change))
    for audience in _urgent_first(change):
        group = group_name(change.match_id, audience)
        message: dict[str, Any] = {"type": "match.frame", "version": change.version}
        if change.to_act is not None:
            message["to_act"] = change.to_act  # its sockets note when they were told
        if change.received_at is not None:
            # When the player's frame that made it was received (epoch ms): each socket's
            # consumer notes how long the push took to reach it (admission's push delay).
            # Not for the sweeper's changes, timed at the deadline they enforce.
            message["t"] = change.received_at
        if in_process:
            # One process: only the audiences someone listens to, and the change
            # itself goes along: a page renders the view, a version-2 socket makes
            # its delta from it, and the version-1 text is encoded only if a socket
            # asks for it (frame_text), once for all of them. At 200 live matches
            # that text, made for every audience of every change, was 8 % of the
            # process's CPU while the load's JSON sockets spoke version 2.
            if not layer.groups.get(group):
                continue
            await layer.group_send(group, _local(message, change, audience, gate))  # no I/O
        else:
            sends.append((group, message))
            audiences[group] = audience
    if not sends:
        return

    # Every audience's frame in one round trip to Redis (matches/realtime/layers.py),
    # the seat to act's first; one after the other, the mover's opponent waited for the
    # mover's own frame. This process's own sockets are handed the change as one
    # process hands it (no Redis: with the proxy's match affinity, deploy/haproxy.cfg,
    # both seats of a match are usually here). A match's changes stay in order (the
    # next change of the match waits for this one: _chain). A failure raises: the
    # sweeper pushes it again.
    # The text for the other processes is encoded once this process's sockets have
    # their frames (three audiences' JSON, on the loop, came before the seat to act's).
    def remote(group: str, message: dict[str, Any]) -> dict[str, Any]:
        return {**message, "text": change.frame(audiences[group])}

    many = getattr(layer, "group_send_many", None)
    if many is not None:
        await many(sends, lambda g, m: _local(m, change, audiences[g], gate), remote)
        return
    for failed in await asyncio.gather(
        *(layer.group_send(g, remote(g, m)) for g, m in sends), return_exceptions=True
    ):
        if isinstance(failed, BaseException):
            raise failed  # the sweeper pushes the change again (_send_after)


def _local(
    message: dict[str, Any], change: Any, audience: str, gate: UrgentFirst
) -> dict[str, Any]:
    """The frame for this process's own sockets of ``audience``: the view itself (shared,
    read-only) and the change, no text to decode; and the change's :class:`UrgentFirst`."""
    return {**message, "view": change.view(audience), "change": change, **gate.part(audience)}


def _urgent_audience(change: Any) -> str | None:
    seat = getattr(change, "to_act", None)
    return f"seat{seat}" if seat in (0, 1) else None


def _urgent_first(change: Any) -> list[str]:
    """The audiences, the seat whose turn the change began first: its clock runs."""
    to_act = _urgent_audience(change)
    return sorted(change.audiences, key=lambda a: a != to_act)


# The longest a socket of this process waits for the seat to act's socket to be sent a
# change first: a bound for a socket that never takes its frame (closed meanwhile).
URGENT_WAIT_S = 0.05


class UrgentFirst:
    """One change's frames to this process's own sockets: the seat to act's first.

    Each socket takes its frame from its own queue, as its consumer's task comes round;
    the mover's, still finishing the frame that made the change, found its frame there at
    once and drew its page (1 ms) while the opponent, whose clock was running, waited:
    on an idle server its frame left 1.1 ms after the mover's (issue 14, the idle move).
    Now every other socket waits until one socket of the seat to act has been sent its
    frame, or :data:`URGENT_WAIT_S` — only if that seat has a socket here at all."""

    __slots__ = ("_event", "_timer", "armed", "urgent", "used")

    def __init__(self, urgent: str | None) -> None:
        self.urgent = urgent
        self.used = False  # the seat to act has a socket in this process
        self.armed = False  # … that has not been sent its frame yet
        self._event: asyncio.Event | None = None
        self._timer: asyncio.TimerHandle | None = None

    def part(self, audience: str) -> dict[str, Any]:
        """What a local frame to ``audience`` carries: ``opens`` (the seat to act's) or
        ``after`` (everyone else's)."""
        if self.urgent is None:
            return {}
        if audience == self.urgent:
            self.used = self.armed = True  # its sockets are handed their frames first
            return {"opens": self}
        return {"after": self}

    def open(self) -> None:
        """A socket of the seat to act was sent the change (or needed nothing), or the
        wait for it is over."""
        self.armed = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Until a socket of the seat to act was sent the change (at most URGENT_WAIT_S)
        and the loop has turned once more, to write it out."""
        if not self.used:
            return
        if self.armed:
            if self._event is None:
                # One event and one timer for the change, however many sockets wait.
                self._event = asyncio.Event()
                self._timer = asyncio.get_running_loop().call_later(URGENT_WAIT_S, self.open)
            await self._event.wait()
        # Daphne's transport (Twisted) writes a frame to its socket on the loop's next
        # turn, not in send: a page drawn now, in this turn, would hold those bytes back
        # as long as it takes (measured: the seat's frame handed over 1.2 ms sooner, and
        # its player got it no sooner at all).
        await asyncio.sleep(0)


def frame_text(message: dict[str, Any], audience: str) -> str:
    """The version-1 text of a pushed ``match.frame`` for ``audience`` (the socket's own)."""
    text = message.get("text")
    return text if text is not None else message["change"].frame(audience)


def frame_view(message: dict[str, Any]) -> dict[str, Any]:
    """The view of a pushed ``match.frame``, a shallow copy (one process shares the view
    itself among its sockets: copy before changing anything nested)."""
    view = message.get("view")
    return dict(view) if view is not None else jsontext.loads(message["text"])["view"]


def _mark_unpushed(match_id: int) -> None:
    from matches.play.store import mark_unpushed

    try:
        mark_unpushed(match_id)
    except Exception:
        log.exception("could not mark match %s for a second push", match_id)


async def drain() -> None:
    """Wait until every push handed to this loop has been sent (tests, shutdown)."""
    while _chains:
        await asyncio.wait(list(_chains.values()))
