"""Admission control: a web process that is saturated refuses new work at the door.

Past what two cores carry, taking on more matches made every match slower
(issue 14: 500 matches fell to a third of the moves of 200, and the matches
being played were the ones that suffered). So each web process watches its own
headroom and, while it has none, turns *new* work away with HTTP 503 and
``Retry-After`` instead of starting something it cannot serve:

- **the event loop's lag**: how late the 50 ms tick (``matches.realtime.periodic``) ran.
  Every frame of every socket of the process waits behind it;
- **the database pool's wait**: how long a live match's call (a frame, a
  deadline) waited for a match thread (``matches.play.dbpool``) before it started;
  and, against a longer limit, how long a new socket's handshake waited. A
  handshake waits behind every live match's frames by design, so a ramp of
  newcomers is not saturation until a handshake waits seconds; the lobby
  sockets' background lane is not counted at all;
- **frames queued per socket**: the most client frames a single socket has
  received that the application has not read yet (``config.serve`` registers
  Daphne's per-connection queues);
- **match sockets opening at once**: the most handshakes of match sockets this process
  had in progress together. After a restart every socket of every match comes back
  in one wave (1,000 at 500 matches); while they do, a new match would take the CPU
  the seats coming back need (*reconnects before newcomers*). A steady ramp of new
  matches opens a few at a time; a wave opens hundreds;
- **the push delay**: from a change's receipt (the frame that made it, stamped on
  arrival) to its frame reaching a socket's consumer in this process, after the
  commit and the channel layer. It is what a player waits for, whatever the hop
  that made it wait: past saturation on the services set-up (2.5× the load that
  filled the cores) moves took 1.2 s at the median and 6.9 s at p99 while none of
  the three above passed its limit (the backlog was in the channel layer and the
  shared cores), and new matches went on being admitted.

Each is the worst of the last :data:`WINDOW_S` seconds, so one slow moment
refuses for a short while and a recovered process admits again by itself.

**Pacing before the limit.** A match admitted makes its load only once its
players move, seconds later, and then for minutes: stopping newcomers only once a
limit is passed let a ramp overshoot (past saturation, p99 2.2 s with 569 matches
let in). So the *pressure* — the largest signal as a fraction of its limit — paces
new matches before it reaches 1: from :data:`PACE_FROM` of a limit, a process
starts at most ``ADMISSION_PACE_PER_S`` new matches a second, falling linearly to
none at the limit (a token bucket: no bursts). Accepting an invite already made
is paced by nothing but saturation itself. ``Retry-After`` grows with the pressure
(``ADMISSION_RETRY_AFTER_S`` at the limit, up to ``ADMISSION_RETRY_AFTER_MAX_S``),
so refused clients come back less often the further past its limits a process is.

*New work* is what makes a match or a socket that is not yet being played:
creating an invite, accepting one, a same-device or computer match, joining the
ranked queue, the queue's pairing pass, a rematch — refused whole, before
anything is written, so no half-made match exists. Lobby sockets and
spectators' match sockets are refused with close code 1013 ("try again
later"; the pages reconnect by themselves with jitter). What is never refused:
a seat's match socket (a reconnect of a match being played), its frames, and
every page that does not start something. Frames also go first on the match
threads (:mod:`matches.play.dbpool`: a move before a handshake's reads).

On Redis each saturated web process says so under a short-lived key, so the
queue's pairing in the Celery worker holds off too (:func:`tier_saturated`).

Settings (environment variables of the same names): ``ADMISSION`` (on by
default), ``ADMISSION_LOOP_LAG_MS``, ``ADMISSION_DB_WAIT_MS``, ``ADMISSION_HANDSHAKE_WAIT_MS``,
``ADMISSION_QUEUED_FRAMES``, ``ADMISSION_PUSH_DELAY_MS``, ``ADMISSION_OPENING_SOCKETS``,
``ADMISSION_PACE_PER_S``,
``ADMISSION_RETRY_AFTER_S``, ``ADMISSION_RETRY_AFTER_MAX_S``.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

WINDOW_S = 2.0  # a signal counts for this long after it was seen
PUBLISH_TTL_MS = 3_000  # a saturated process's Redis mark expires after this

PACE_FROM = 0.5  # from this fraction of a limit on, new matches are paced

# The URL names (namespace ``matches``) that start new work: refused when saturated.
NEW_WORK = frozenset(
    {
        "invite_create",
        "invite_accept",
        "same_device_create",
        "computer_create",
        "api_same_device",
        "api_computer",
        "api_invite_create",
        "api_invite_accept",
        "queue_join",
        "rematch",
    }
)
# What completes work already let in (an invite made before): refused only when saturated.
NOT_PACED = frozenset({"invite_accept", "api_invite_accept"})


@dataclass(frozen=True)
class Headroom:
    """The worst of each signal over the last :data:`WINDOW_S` seconds."""

    loop_lag_ms: float
    db_wait_ms: float
    frames_queued: int
    handshake_wait_ms: float = 0.0
    push_delay_ms: float = 0.0
    opening: int = 0

    def _signals(self) -> list[tuple[str, float, float]]:
        """Each signal: its reason, its value and its limit, in the order they are judged."""
        return [
            ("loop_lag", self.loop_lag_ms, limit("ADMISSION_LOOP_LAG_MS", 250)),
            ("db_wait", self.db_wait_ms, limit("ADMISSION_DB_WAIT_MS", 250)),
            ("frames_queued", self.frames_queued, limit("ADMISSION_QUEUED_FRAMES", 8)),
            ("handshake_wait", self.handshake_wait_ms, limit("ADMISSION_HANDSHAKE_WAIT_MS", 2000)),
            ("push_delay", self.push_delay_ms, limit("ADMISSION_PUSH_DELAY_MS", 150)),
            ("reconnect_wave", self.opening, limit("ADMISSION_OPENING_SOCKETS", 40)),
        ]

    def saturated(self) -> str | None:
        """Which limit is passed (``None``: there is headroom)."""
        if not enabled():
            return None
        return next((reason for reason, v, lim in self._signals() if v > lim), None)

    def pressure(self) -> float:
        """How near the nearest limit is: the largest signal ÷ its limit (past 1: saturated).

        A limit of 0 or less (always saturated, as a test sets it) is infinitely near.
        """
        if not enabled():
            return 0.0
        return max(v / lim if lim > 0 else math.inf for _, v, lim in self._signals())


def enabled() -> bool:
    return bool(getattr(settings, "ADMISSION", True))


def limit(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def retry_after_s(pressure: float | None = None) -> int:
    """Seconds a refused client should wait: ``ADMISSION_RETRY_AFTER_S`` up to the limit,
    then as many times that as the pressure (twice past the limit: twice as long), at
    most ``ADMISSION_RETRY_AFTER_MAX_S``."""
    base = int(getattr(settings, "ADMISSION_RETRY_AFTER_S", 5))
    most = max(base, int(getattr(settings, "ADMISSION_RETRY_AFTER_MAX_S", 30)))
    p = headroom().pressure() if pressure is None else pressure
    if not p > 1:
        return base
    return base if math.isinf(p) else min(most, max(base, round(base * p)))


class _Window:
    """The largest value noted in the last :data:`WINDOW_S` seconds (thread-safe)."""

    def __init__(self) -> None:
        self._samples: collections.deque[tuple[float, float]] = collections.deque()
        self._lock = threading.Lock()

    def note(self, value: float, now: float | None = None) -> None:
        t = time.monotonic() if now is None else now
        with self._lock:
            # Keep the deque decreasing: a sample below a newer one can never be the max.
            while self._samples and self._samples[-1][1] <= value:
                self._samples.pop()
            self._samples.append((t, value))

    def worst(self, now: float | None = None) -> float:
        t = time.monotonic() if now is None else now
        with self._lock:
            while self._samples and self._samples[0][0] < t - WINDOW_S:
                self._samples.popleft()
            return self._samples[0][1] if self._samples else 0.0

    def clear(self) -> None:
        with self._lock:
            self._samples.clear()


_loop_lag = _Window()
_db_wait = _Window()
_handshake_wait = _Window()
_push_delay = _Window()
_opening = _Window()
_opening_now = 0
_opening_lock = threading.Lock()
_queues: weakref.WeakSet[Any] = weakref.WeakSet()
_listeners: list[Callable[[str, float], None]] = []  # matches.clock.metrics observes


def note_loop_lag(ms: float) -> None:
    """The loop's tick ran ``ms`` late (``matches.realtime.periodic``)."""
    _loop_lag.note(max(0.0, ms))
    for f in _listeners:
        f("loop_lag", ms)


def note_db_wait(ms: float, lane: str = "play") -> None:
    """A call waited ``ms`` for a match thread (``matches.play.dbpool``): a live
    match's (``lane="play"``) or a new socket's handshake (``"handshake"``)."""
    (_handshake_wait if lane == "handshake" else _db_wait).note(max(0.0, ms))
    for f in _listeners:
        f("db_wait", ms)


def note_push_delay(ms: float) -> None:
    """A change reached a socket here ``ms`` after its receipt (``realtime.match_consumer``)."""
    _push_delay.note(max(0.0, ms))
    for f in _listeners:
        f("push_delay", ms)


@contextlib.contextmanager
def opening_socket() -> Iterator[None]:
    """A match socket's handshake is in progress here (``realtime.match_consumer``'s
    ``connect``, from its start until it accepts or refuses)."""
    global _opening_now
    with _opening_lock:
        _opening_now += 1
        now = _opening_now
    _opening.note(now)
    try:
        yield
    finally:
        with _opening_lock:
            _opening_now -= 1


def watch_queue(queue: Any) -> None:
    """Count a socket's queue of received frames (anything with ``qsize()``)."""
    _queues.add(queue)


# The fullest socket's queue, as last counted (monotonic s, frames): every socket of
# the process is looked at, so at most every QUEUE_SCAN_S. The liveness pulse asks
# 20 times a second; at 300 live matches the count was 2.5 % of a web process's CPU.
QUEUE_SCAN_S = 0.2
_scanned: tuple[float, int] = (float("-inf"), 0)


def frames_queued(queues: Iterable[Any] | None = None) -> int:
    global _scanned
    if queues is not None:
        return max((q.qsize() for q in list(queues)), default=0)
    at, n = _scanned
    now = time.monotonic()
    if now - at < QUEUE_SCAN_S:
        return n
    # Read from the liveness thread while the loop adds and drops sockets: a
    # WeakSet copied mid-change raises, so copy it under its own guard (the GIL
    # makes ``data.copy()`` of the underlying set atomic).
    found = [q for ref in _queues.data.copy() if (q := ref()) is not None]
    n = max((q.qsize() for q in found), default=0)
    _scanned = (now, n)
    return n


def headroom() -> Headroom:
    return Headroom(
        _loop_lag.worst(),
        _db_wait.worst(),
        frames_queued(),
        _handshake_wait.worst(),
        _push_delay.worst(),
        int(_opening.worst()),
    )


def saturated() -> str | None:
    """Why this process takes no new work now, or ``None``."""
    return headroom().saturated()


def reset() -> None:
    """Forget every signal (tests)."""
    global _scanned
    _scanned = (float("-inf"), 0)
    _loop_lag.clear()
    _db_wait.clear()
    _handshake_wait.clear()
    _push_delay.clear()
    _opening.clear()
    _pacer.reset()


# --- refusals ---------------------------------------------------------------------

refusals: collections.Counter[str] = collections.Counter()  # by what was refused


def refuse(what: str, reason: str) -> None:
    refusals[what] += 1
    log.info("saturated (%s): refused %s", reason, what)
    for f in _listeners:
        f("refused:" + what, 1)


def admit(what: str) -> bool:
    """Whether new work ``what`` may start here now; counts a refusal if not.

    Saturated: refused. Under pressure (from :data:`PACE_FROM` of a limit): a new
    match (anything of :data:`NEW_WORK` but :data:`NOT_PACED`) waits for the pacer.
    """
    return _admitted(what, spend=True)


def refused_early(what: str) -> bool:
    """Whether new work ``what`` is refused before anything of its request is read (its
    session, its user: :mod:`matches.lobby.admission_http`), counted if so: saturated,
    or a new match while the pacer has no start to give. Otherwise :func:`admit`
    decides once the request is known to come from someone (it may still refuse)."""
    return not _admitted(what, spend=False)


def _admitted(what: str, *, spend: bool) -> bool:
    """Whether ``what`` may go; counts a refusal if not. ``spend``: a new match takes the
    pacer's start (else the pacer is only asked whether it has one)."""
    room = headroom()
    reason = room.saturated()
    if reason is None and what in NEW_WORK and what not in NOT_PACED:
        pressure = room.pressure()
        if not (_pacer.take(pressure) if spend else _pacer.could_take(pressure)):
            reason = "paced"
    if reason is None:
        return True
    refuse(what, reason)
    return False


class Pacer:
    """A token bucket of new matches whose rate falls as the pressure rises.

    Below :data:`PACE_FROM` every start is let in; from there ``ADMISSION_PACE_PER_S``
    a second, falling linearly to none at a pressure of 1. The bucket holds one
    start at most: a process that was quiet does not let a burst in at once.
    """

    def __init__(self) -> None:
        self._tokens = 1.0
        self._at: float | None = None
        self._lock = threading.Lock()

    @staticmethod
    def rate(pressure: float) -> float:
        """New matches a second at ``pressure`` (infinite below :data:`PACE_FROM`)."""
        if pressure < PACE_FROM:
            return math.inf
        most = limit("ADMISSION_PACE_PER_S", 4)
        return max(0.0, most * (1.0 - pressure) / (1.0 - PACE_FROM))

    def take(self, pressure: float, now: float | None = None) -> bool:
        """Whether one start may go now (and if so it is counted)."""
        t = time.monotonic() if now is None else now
        rate = self.rate(pressure)
        with self._lock:
            if math.isinf(rate):
                self._tokens, self._at = 1.0, t
                return True
            if self._at is not None:
                self._tokens = min(1.0, self._tokens + max(0.0, t - self._at) * rate)
            self._at = t
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def could_take(self, pressure: float, now: float | None = None) -> bool:
        """Whether :meth:`take` would let one start go now (nothing is counted)."""
        t = time.monotonic() if now is None else now
        rate = self.rate(pressure)
        if math.isinf(rate):
            return True
        with self._lock:
            tokens = self._tokens
            if self._at is not None:
                tokens = min(1.0, tokens + max(0.0, t - self._at) * rate)
        return tokens >= 1.0

    def reset(self) -> None:
        with self._lock:
            self._tokens, self._at = 1.0, None


_pacer = Pacer()


# --- across processes (Redis): the queue's pairing in the worker -------------------


def _key() -> str:
    return f"{getattr(settings, 'LIVENESS_PREFIX', 'sb')}:admission:saturated"


_published: tuple[bool, float] | None = None  # (saturated, when) last said on Redis


def publish(name: str) -> None:
    """Say on Redis whether this web process is saturated (the pulse thread, every pulse:
    on a change at once, else once a second)."""
    global _published
    from matches.play.sync_redis import client as _redis
    from matches.play.timing import now_ms as _now_ms

    client = _redis()
    if client is None:
        return
    busy, t = saturated() is not None, time.monotonic()
    if _published is not None and _published[0] == busy and t - _published[1] < 1.0:
        return
    _published = (busy, t)
    now = _now_ms()
    pipe = client.pipeline(transaction=False)
    if busy:
        pipe.zadd(_key(), {name: now + PUBLISH_TTL_MS})
    else:
        pipe.zrem(_key(), name)
    pipe.zremrangebyscore(_key(), "-inf", now)
    pipe.execute()


def tier_saturated() -> bool:
    """Whether this process, or (on Redis) any web process, is saturated now."""
    if saturated() is not None:
        return True
    from matches.play.sync_redis import client as _redis
    from matches.play.timing import now_ms as _now_ms

    client = _redis()
    if client is None or not enabled():
        return False
    try:
        return bool(client.zcount(_key(), _now_ms(), "+inf"))
    except Exception:
        return False  # Redis down: the pairing's own writes will tell
