"""A late push outlives the socket it reached.

A seat is given back what the push of its turn took beyond ``act.PUSH_BOUND_MS``
when it acts (``act.credit_late_push``), from the moment its socket noted. But a
socket can die before its seat acts: in the drill at 500 matches pushes waited
10–12 s behind a reconnect wave, the next fault killed the process holding the
socket, and the seat's clock had run all that time with nobody to give it back
(up to 17.9 s of main time charged in one row).

So on Redis a socket that is pushed its seat's turn late also says so
(``<prefix>:late:<match>:<seat>`` → when it was pushed, and from when at the
earliest the wait was ours), and whoever gives that seat time back without the
socket — a dead process's seats (``presence``), an outage (``outage``), a
reconnected socket's first action (``act``), the sweeper before it flags the seat
(``deadlines``) — gives the push's lateness first.

A record is this decision's when it was pushed at or after the decision began
(a seat's earlier decisions were all pushed before this one started). Nothing is
given twice: each credit starts after the time already given back (``LastCredit``).
Best effort. Without Redis (the embedded default) the notes live in the one web
process, whose own death is an outage of the whole tier.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from matches import conf
from matches.play import sync_redis

log = logging.getLogger(__name__)

TTL_MS = 30 * 60_000  # longer than any decision (main time, the delay, a hold)


@dataclass(frozen=True)
class Late:
    pushed_at: int  # when the turn reached the seat's socket (epoch ms)
    since: int | None  # the wait was ours from then at the earliest (a socket's handshake)

    def of_decision(self, decision_start: int | None) -> bool:
        return decision_start is not None and self.pushed_at >= decision_start


def _key(match_id: int, seat: int) -> str:
    return f"{conf.liveness_prefix()}:late:{match_id}:{seat}"


# Without Redis (the embedded default: one web process, its sweeper on the same loop)
# the notes are this process's: a socket's death is then a player's closed tab or
# network, and the process's own death an outage of the whole tier.
_local: dict[tuple[int, int], tuple[Late, float]] = {}
LOCAL_MAX = 20_000


def _note_local(match_id: int, seats: list[int], late: Late) -> None:
    now = time.monotonic()
    if len(_local) >= LOCAL_MAX:
        for key in [k for k, (_, until) in list(_local.items()) if until <= now]:
            _local.pop(key, None)
        if len(_local) >= LOCAL_MAX:
            _local.clear()  # a flood of late pushes: forget, never grow without bound
    for seat in seats:
        _local[(match_id, seat)] = (late, now + TTL_MS / 1000)


def note(match_id: int, seats: list[int], pushed_at: int, since: int | None) -> None:
    """``seats``' turn reached a socket at ``pushed_at``, late (synchronous; best effort)."""
    client = sync_redis.client()
    if not seats:
        return
    if client is None:
        _note_local(match_id, seats, Late(pushed_at, since))
        return
    value = f"{pushed_at}:{'' if since is None else since}"
    try:
        pipe = client.pipeline(transaction=False)
        for seat in seats:
            pipe.set(_key(match_id, seat), value, px=TTL_MS)
        pipe.execute()
    except Exception:
        log.debug("late push not recorded", exc_info=True)


def note_soon(match_id: int, seats: list[int], pushed_at: int, since: int | None) -> None:
    """:func:`note`, off the event loop (a socket's consumer must not wait on Redis)."""
    if sync_redis.client() is None:
        note(match_id, seats, pushed_at, since)  # this process's memory: no wait
        return
    try:
        asyncio.get_running_loop().run_in_executor(None, note, match_id, seats, pushed_at, since)
    except RuntimeError:  # the process is shutting down (its executor with it)
        log.debug("late push not recorded: shutting down")


def read(seats: list[tuple[int, int]]) -> dict[tuple[int, int], Late]:
    """The late pushes noted for ``(match, seat)`` pairs (one round trip; best effort)."""
    client = sync_redis.client()
    if not seats:
        return {}
    if client is None:
        now = time.monotonic()
        return {
            pair: found[0]
            for pair in seats
            if (found := _local.get(pair)) is not None and found[1] > now
        }
    try:
        values = client.mget([_key(m, s) for m, s in seats])
    except Exception:
        log.warning("late pushes not read: Redis does not answer")
        return {}
    found = {}
    for pair, raw in zip(seats, values, strict=True):
        late = _parse(raw)
        if late is not None:
            found[pair] = late
    return found


def read_one(match_id: int, seat: int) -> Late | None:
    """The late push noted for ``seat`` of the match, if any (:func:`read`)."""
    return read([(match_id, seat)]).get((match_id, seat))


def _parse(raw: Any) -> Late | None:
    if raw is None:
        return None
    try:
        pushed, _, since = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition(":")
        return Late(int(pushed), int(since) if since else None)
    except ValueError:
        return None
