"""Is the web tier receiving frames? Outages found, and given back to the players.

RULES §8 voids a match only when a service fault made reliable timing
impossible, and ARCHITECTURE says our outage is never charged to a player.
What makes timing unreliable is the **web tier** — the processes that receive
and stamp frames — being unable to receive them while a clock runs. A slow or
restarted Celery worker, or a busy CPU, does not: frames are still stamped on
arrival. So this module watches only the web tier.

**Proof of life.** Every web process runs a pulse thread (a thread, so request
handling cannot starve it). It proves that the process's event loop is turning
(the loop stamps :data:`loop_tick_ms` every 50 ms; a stalled loop cannot stamp
frames, so its ticks are what the thread reports) and, on Redis, that the
channel layer answers (a process that cannot push is no use to a player):

- every :data:`PULSE_S` it adds its last tick to a Redis sorted set; the
  deadline sweeper in the Celery worker enforces a deadline only once some web
  process has proved it was alive *after* it (:func:`tier_alive_ms`), so a
  deadline falling in an outage is never enforced before the outage is
  given back;
- every :data:`BEAT_S` it writes its ``Heartbeat`` row (``kind="web"``).

Behind a proxy (``make run-services``: HAProxy), a web process proves life
only while the proxy accepts connections too (``LIVENESS_PROBE``, its
address): players reach the web tier only through it.

**Outages** (:func:`beat`). A process beating finds the newest beat of all web
processes. If that is more than :data:`GAP_MS` old, nobody could receive
frames in between: :func:`matches.clock.outage.credit_outage` gives that time back
to every waiting or live match (a running decision's clock, a start or
continue window) — or voids a live match when the outage passed three
minutes. The beat, the gap check and the credit are one transaction under the
web rows' locks (the gap read again once they are held, so that the row a
restarted process inserted meanwhile counts), so two processes starting together
credit an outage once, and no process reports life (so no sweeper moves) before
the credit is committed.
A process that stops cleanly (:func:`retire`) leaves the others to beat; with
two web processes, restarting one is no outage. From the moment it starts to
stop (:func:`stop_receiving`: it no longer listens, and it has closed its
sockets) it proves nothing more, and that moment is its last beat: when every
web process stopped, the outage counts from when they stopped receiving frames,
not from when they finished draining.

The credit starts at the last beat before the outage, which may be up to
:data:`BEAT_S` before the tier truly stopped: a player may be given up to a
second more than the outage, never less.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from datetime import UTC, datetime
from typing import Any

from django.db import close_old_connections, transaction

from matches import conf
from matches.models import Heartbeat
from matches.play import sync_redis

log = logging.getLogger(__name__)

PULSE_S = 0.05  # Redis proof of life (the sweeper's gate)
BEAT_S = 1.0  # database heartbeat (outage detection)
GAP_MS = 2_000  # the whole web tier silent longer than this: an outage
STALL_MS = 1_000  # a loop that has not ticked for this long is not receiving frames
ALIVE_EVERY_S = 0.25  # the pulse thread says the process runs (a stalled loop too)
ALIVE_TTL_MS = 5_000
PULSE_TTL_MS = 60_000  # pulses older than this are dropped from the set

# Set by the web process's event loop (matches.realtime.periodic) every 50 ms.
loop_tick_ms: int | None = None
# The longest gap between two of the loop's ticks since the pulse thread last took it.
worst_tick_gap_ms = 0
# This process has written its first heartbeat (and credited any outage before it).
beaten = False
# When this process stopped receiving frames (a clean shutdown began): epoch ms.
stopped_at_ms: int | None = None


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def note_tick(now_ms: int) -> None:
    """The event loop turned at ``now_ms`` (``matches.realtime.periodic``, every 50 ms)."""
    global loop_tick_ms, worst_tick_gap_ms
    if loop_tick_ms is not None:
        worst_tick_gap_ms = max(worst_tick_gap_ms, now_ms - loop_tick_ms)
    loop_tick_ms = now_ms


def take_worst_tick_gap() -> int:
    """The longest gap between the loop's ticks since the last call (and start over)."""
    global worst_tick_gap_ms
    gap, worst_tick_gap_ms = worst_tick_gap_ms, 0
    return gap


# --- the database heartbeat: outages ------------------------------------------------


def beat(
    tick_ms: int | None = None, name: str | None = None, alive_since: int | None = None
) -> list[int]:
    """Record that this web process was receiving frames at ``tick_ms``; credit any outage.

    ``alive_since``: this process's loop is known to have turned without a stall
    from then until ``tick_ms`` (its previous beat, when the pulse thread saw no
    gap between the ticks since). The tier was alive all that time, however
    long the database took to take the beats: so a slow write (SQLite's lock,
    held by a burst of moves) is never taken for an outage.

    Returns the ids of the matches credited (or voided) for an outage this beat ended.
    """
    from matches.clock import outage

    name = name or process_name()
    tick = _now_ms() if tick_ms is None else tick_ms
    with transaction.atomic():
        rows = list(Heartbeat.objects.select_for_update().filter(kind="web").order_by("pk"))
        # Read the beats again now that the locks are held: a restarted process beats
        # under a new name, and the row it inserted while this process waited for the
        # locks is invisible to the statement that waited (begun before that commit).
        fresh = list(
            Heartbeat.objects.filter(kind="web").values_list("name", "last_beat", "active")
        )
        newest = max((_ms(t) for _, t, _ in fresh if t), default=None)
        own = next((r for r in rows if r.name == name), None)
        if own is None:
            Heartbeat.objects.create(
                kind="web", name=name, started_at=_dt(tick), last_beat=_dt(tick)
            )
        elif _ms(own.last_beat) < tick or not own.active:
            own.last_beat, own.active = max(own.last_beat, _dt(tick)), True
            own.save(update_fields=["last_beat", "active"])
        if newest is None or tick - newest <= GAP_MS:
            return _dead_peers(fresh, name, tick)
        if alive_since is not None and alive_since - newest <= GAP_MS:
            # This process was receiving frames throughout: no outage.
            return _dead_peers(fresh, name, tick)
        log.warning("the web tier was silent for %.1f s (until %s)", (tick - newest) / 1000, name)
        # Still under the web rows' locks: no other web process reports life
        # (and so no sweeper enforces a deadline) before the credit is committed.
        credited = outage.credit_outage(newest, tick)
        # Every silent process is covered by that credit: none is a dead peer later.
        _forget_silent(fresh, name, tick)
        from matches.clock import metrics

        metrics.observe_outage(credited, newest, tick)
        return credited


DEAD_RECENT_MS = 60_000  # a peer silent longer than this died long ago: its seats are back


def _dead_peers(fresh: list[tuple[str, datetime, bool]], own: str, tick: int) -> list[int]:
    """Peers that stopped beating without retiring (killed): their seats get their time back.

    Under the web rows' locks (:func:`beat`), so one live process handles each death.
    """
    if _redis() is None:
        return []  # one web process: its death is an outage of the whole tier
    from matches.clock import presence

    dead = [(n, _ms(t)) for n, t, active in fresh if active and n != own and tick - _ms(t) > GAP_MS]
    # A peer whose loop stalled (a reconnect wave) is silent but not dead: its pulse
    # thread still runs, and the frames its loop kept waiting are stamped back
    # (matches.clock.receipt). Crediting its seats too gave the same seconds twice.
    running = _threads_running([n for n, _ in dead])
    dead = [(n, last) for n, last in dead if n not in running]
    if not dead:
        return []
    alive = [n for n, t, active in fresh if active and tick - _ms(t) <= GAP_MS] + [own]
    changed: list[int] = []
    for n, last in dead:
        Heartbeat.objects.filter(name=n).update(active=False)
        if tick - last <= DEAD_RECENT_MS:
            changed += presence.credit_dead(n, last, tick, alive)
        else:
            presence.take(n)
    return changed


def _alive_key(process: str) -> str:
    return f"{conf.liveness_prefix()}:alive:{process}"


def thread_alive(name: str | None = None) -> None:
    """This process runs (its pulse thread does), whether or not its loop turns."""
    client = _redis()
    if client is not None:
        client.set(_alive_key(name or process_name()), _now_ms(), px=ALIVE_TTL_MS)


def _threads_running(names: list[str]) -> set[str]:
    """Those of ``names`` whose pulse thread was running within :data:`GAP_MS`."""
    client = _redis()
    if client is None or not names:
        return set()
    now = _now_ms()
    try:
        seen = client.mget([_alive_key(n) for n in names])
    except Exception:
        return set()
    return {
        n for n, at in zip(names, seen, strict=True) if at is not None and now - int(at) <= GAP_MS
    }


def _forget_silent(fresh: list[tuple[str, datetime, bool]], own: str, tick: int) -> None:
    silent = [n for n, t, active in fresh if active and n != own and tick - _ms(t) > GAP_MS]
    if not silent:
        return
    Heartbeat.objects.filter(name__in=silent).update(active=False)
    if _redis() is not None:
        from matches.clock import presence

        for n in silent:
            presence.take(n)


def stop_receiving(at_ms: int | None = None) -> None:
    """This web process no longer receives frames (its shutdown began): it proves no
    more life, and :func:`retire` records this moment as its last beat."""
    global stopped_at_ms
    if stopped_at_ms is None:
        stopped_at_ms = _now_ms() if at_ms is None else at_ms


def retire(name: str | None = None) -> None:
    """This web process stops cleanly: the others carry on, and its pulses end."""
    name = name or process_name()
    last = _now_ms() if stopped_at_ms is None else stopped_at_ms
    Heartbeat.objects.filter(name=name).update(active=False, last_beat=_dt(last))
    client = _redis()
    if client is not None:
        try:
            client.zrem(_pulse_key(), name)
        except Exception:
            log.debug("could not drop this process's pulse", exc_info=True)


def worker_beat(name: str | None = None) -> None:
    """A Celery worker's (or the embedded) sweeper is alive: for /healthz only."""
    name = name or f"{process_name()}:sweeper"
    now = _dt(_now_ms())
    updated = Heartbeat.objects.filter(name=name).update(kind="worker", last_beat=now, active=True)
    if not updated:
        Heartbeat.objects.get_or_create(
            name=name, defaults={"kind": "worker", "started_at": now, "last_beat": now}
        )


# --- the Redis pulse: the sweeper's gate ---------------------------------------------


def _redis() -> Any:
    """A small synchronous Redis client for pulses (``None`` without ``REDIS_URL``)."""
    return sync_redis.client()


def _pulse_key() -> str:
    return f"{conf.liveness_prefix()}:pulse:web"


def pulse(tick_ms: int, name: str | None = None) -> None:
    """Tell the sweepers this process received frames at ``tick_ms`` (raises if Redis fails)."""
    client = _redis()
    if client is None:
        return
    key = _pulse_key()
    pipe = client.pipeline(transaction=False)
    pipe.zadd(key, {name or process_name(): tick_ms})
    pipe.zremrangebyscore(key, "-inf", tick_ms - PULSE_TTL_MS)
    pipe.execute()


def tier_alive_ms() -> int | None:
    """The latest moment some web process proved it was receiving frames (epoch ms).

    Without Redis (the embedded default) the sweeper runs on the one web
    process's own loop, so the present moment is proof enough — once this
    process has beaten (and credited any outage that its start ended), and
    until it stopped receiving frames.
    """
    client = _redis()
    if client is None:
        if not beaten:
            return None
        return _now_ms() if stopped_at_ms is None else stopped_at_ms
    try:
        top = client.zrevrange(_pulse_key(), 0, 0, withscores=True)
    except Exception:
        log.warning("no proof of life from the web tier: Redis does not answer")
        return None
    return int(top[0][1]) if top else None


# --- the pulse thread ------------------------------------------------------------


class PulseThread(threading.Thread):
    """Beats for this web process until :meth:`stop` (a daemon: it never holds up exit)."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name="liveness-pulse", daemon=True)
        self.process = name or process_name()
        self._stop_event = threading.Event()
        self._last_beat = 0.0
        self._last_alive = 0.0
        self._redis_ok = False  # a ping first, and after every failure
        self._proxy_ok = False
        self._beat_tick: int | None = None  # the tick of this thread's last beat
        self._gap_ms = 0  # the loop's longest stall since that beat

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.once()
            except Exception:
                log.exception("liveness pulse failed")
                close_old_connections()
            self._stop_event.wait(PULSE_S)

    def once(self) -> None:
        tick = loop_tick_ms
        now = _now_ms()
        if stopped_at_ms is not None:
            return  # shutting down: no longer listening, its sockets closed
        if time.monotonic() - self._last_alive >= ALIVE_EVERY_S:
            # Running, if perhaps stalled: a peer must not take this process for dead.
            with contextlib.suppress(Exception):
                thread_alive(self.process)
                self._last_alive = time.monotonic()
        if tick is None or now - tick > STALL_MS:
            return  # the loop is not turning: this process proves nothing now
        client = _redis()
        if client is not None and not self._redis_ok:
            client.ping()  # no channel layer, no pushes: then this process proves nothing
        if time.monotonic() - self._last_beat >= BEAT_S:
            # Once a second: is the proxy in front of us up (players reach us through
            # it), then the database beat (it credits an outage this process ends)
            # before the pulses that let the sweepers move.
            self._proxy_ok = proxy_answers()
            self._gap_ms = max(self._gap_ms, take_worst_tick_gap())
            if self._proxy_ok:
                # Alive since the last beat if the loop never stalled since.
                since = self._beat_tick if self._gap_ms <= STALL_MS else None
                beat(tick, self.process, alive_since=since)
                close_old_connections()
                _mark_beaten()
                self._last_beat = time.monotonic()
                self._beat_tick, self._gap_ms = tick, 0
            else:
                self._beat_tick = None  # players could not reach us: no proof since
        if not self._proxy_ok:
            return
        try:
            pulse(tick, self.process)
            self._redis_ok = True
            from matches.play import admission

            admission.publish(self.process)  # saturated or not: the worker's pairing reads it
        except Exception:
            self._redis_ok = False
            raise


def _mark_beaten() -> None:
    global beaten
    beaten = True


def proxy_answers() -> bool:
    """Whether the address players connect to (``LIVENESS_PROBE``, the proxy) accepts."""
    probe = conf.liveness_probe()
    if not probe:
        return True
    host, _, port = probe.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=0.5).close()
    except OSError:
        return False
    return True


_thread: PulseThread | None = None


def start_pulse() -> PulseThread:
    """Start this web process's pulse (idempotent)."""
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = PulseThread()
        _thread.start()
    return _thread


def stop_pulse() -> None:
    global _thread
    if _thread is not None:
        _thread.stop()
        _thread.join(timeout=2)
        _thread = None
