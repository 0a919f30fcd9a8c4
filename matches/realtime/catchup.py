"""A socket a push never reached is brought up to date.

A change is pushed after its commit, and a push can be lost on the way: its
process killed between the commit and the push (`make drill` at 500 matches:
21 seats on the live process left a version behind until their opponents came
back, 9 s later, the clock of some of them running), or stopped with the push in
flight, or the channel layer dropping it. A seat left on an old view does not
know it is to act.

So every :data:`CATCHUP_S` each web process reads, in one query, the version of
every match it holds a socket of. A socket that still shows an older version
than one read a whole interval before is sent the current view, as on a
reconnection. A push that is only slow (past saturation it can take a second)
has that interval to arrive first, so in normal play nothing is sent twice.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from matches.clock import metrics
from matches.play import db

log = logging.getLogger(__name__)

CATCHUP_S = 2.0
CHUNK = 500  # match ids per query (SQLite's limit on a statement's parameters)
CONCURRENCY = 8  # sockets brought up to date at once (twice PostgreSQL's match threads)

_sockets: weakref.WeakSet[Any] = weakref.WeakSet()
_read: dict[int, int] = {}  # match id → its version at the last pass


def track(consumer: Any) -> None:
    """Watch ``consumer`` (a match socket with ``match_id`` and ``sent_version``)."""
    _sockets.add(consumer)


def untrack(consumer: Any) -> None:
    _sockets.discard(consumer)


def _versions(ids: list[int]) -> dict[int, int]:
    from matches.models import Match

    found: dict[int, int] = {}
    for i in range(0, len(ids), CHUNK):
        rows = Match.objects.filter(pk__in=ids[i : i + CHUNK]).values_list("pk", "version")
        found.update(rows)
    return found


async def pass_once() -> int:
    """One pass: the sockets behind a version read a pass ago get the current view.
    Returns how many were sent it."""
    global _read
    sockets = [c for c in list(_sockets) if getattr(c, "accepted", False)]
    if not sockets:
        _read = {}
        return 0
    # In the live matches' lane: a reconnect wave's handshakes must not hold it back
    # (the background lane starved for seconds in the drill at 500 matches).
    versions = await db.run(_versions, sorted({c.match_id for c in sockets}))
    behind = [c for c in sockets if c.sent_version < _read.get(c.match_id, -1)]
    _read = versions
    # Several at once (each reads its view on a match thread): one after the other, a
    # reconnect wave's 50 sockets behind took the pass seconds, the last of them
    # waiting on an old view all that time.
    gate = asyncio.Semaphore(CONCURRENCY)

    async def bring(c: Any) -> None:
        async with gate:
            try:
                await c.catch_up()
            except Exception as exc:
                # Closed under it (its disconnect not run yet, or never: a handshake the
                # server gave up on): not watched any more, or it is tried every pass.
                untrack(c)
                log.info("socket of match %s not brought up to date: %r", c.match_id, exc)

    await asyncio.gather(*(bring(c) for c in behind))
    if behind:
        metrics.caught_up.inc(len(behind))
        log.warning("%d sockets were a version behind; sent the current view", len(behind))
    return len(behind)


async def run() -> None:
    """Pass every :data:`CATCHUP_S` for as long as the process serves sockets."""
    while True:
        await asyncio.sleep(CATCHUP_S)
        try:
            await pass_once()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("catch-up pass failed")
