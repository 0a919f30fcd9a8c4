"""The deadline sweeper: every overdue match is resolved, whoever scheduled it.

Rows carry their next wake-up time (``Match.wake_at_ms``, indexed); one pass
(:func:`sweep_once`) resolves every match whose time has come through
``check_match`` and says when the next one is due, so the runner
sleeps until then (at most :data:`MAX_SLEEP_S`, so a deadline set meanwhile by
another process is found within that). Nothing is scheduled per move and
nothing lives only in a process's memory: a killed worker's successor finds
every overdue row at its first pass.

Where it runs:

- with Redis (``MATCH_SWEEPER = "celery"``), a thread in each Celery worker
  (``SweeperStep`` in ``config/celery.py``); several workers share the work
  (``check_match`` skips a row another holds, and is idempotent);
- in the embedded default, an asyncio task of the web process
  (``matches.realtime.periodic``).

A deadline is enforced only once the web tier has proved it was receiving
frames after it (``liveness.tier_alive_ms``): time in which nobody could send
a frame is given back to the players instead (``outage.credit_outage``).
The same pass re-pushes matches whose push failed, and beats for ``/healthz``.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import close_old_connections

from matches.clock import liveness
from matches.clock.deadlines import GRACE_MS, check_match, due_matches, next_wake_ms
from matches.lobby import computer
from matches.lobby.computer import computer_turn
from matches.play import timing
from matches.play.store import repush_pending

log = logging.getLogger(__name__)

MAX_SLEEP_S = 0.1
MIN_SLEEP_S = 0.005
COMPUTER_WAIT_S = 0.02
HOUSEKEEPING_S = 1.0  # re-pushes and the sweeper's heartbeat

last_pass_ms: int | None = None


def sweep_once() -> float:
    """Resolve every match that is due; return how long to sleep before the next pass (s)."""
    global last_pass_ms
    waiting = 0
    due: list[tuple[int, int]] = []
    alive = liveness.tier_alive_ms()
    if alive is not None:
        # Due: the grace has passed since the wake-up time, and the web tier
        # was receiving frames at that time (else the time is given back).
        until = min(alive, timing.now_ms() - GRACE_MS)
        due = due_matches(until)
        for pk, version in due:
            if computer.in_flight(pk, version):
                # Thinking, or waiting for its fixed release time: no query meanwhile.
                waiting += 1
                continue
            try:
                # A computer whose pause is over decides (elsewhere); else the deadline.
                turn = computer_turn(pk, version)
                if turn is not None:
                    computer.dispatch(turn)
                else:
                    check_match(pk, version)
            except Exception:
                log.exception("deadline check of match %s failed", pk)
    last_pass_ms = timing.now_ms()
    nxt = next_wake_ms()
    if nxt is None:
        return MAX_SLEEP_S
    _note_overdue(nxt, alive)
    wait = (nxt + GRACE_MS - timing.now_ms()) / 1000
    if due and waiting == len(due):
        wait = max(wait, COMPUTER_WAIT_S)  # only computers are due: each on its own timer
    return max(MIN_SLEEP_S, min(MAX_SLEEP_S, wait))


OVERDUE_LOG_MS = 1_000  # a wake-up overdue by more than this is logged, once a second
_overdue_logged_at = 0.0


def _note_overdue(wake_ms: int, alive: int | None) -> None:
    """Log a wake-up time long past, with the web tier's proof of life that gates it: an
    overdue match explains itself in the log (a stalled or silent web tier, Redis, a
    computer still thinking)."""
    global _overdue_logged_at
    now = timing.now_ms()
    overdue = now - wake_ms - GRACE_MS
    if overdue <= OVERDUE_LOG_MS or time.monotonic() - _overdue_logged_at < 1.0:
        return
    _overdue_logged_at = time.monotonic()
    proof = "none" if alive is None else f"{now - alive} ms old"
    log.info("a wake-up is %d ms overdue; the web tier's proof of life: %s", overdue, proof)


def housekeeping() -> None:
    """Every second: push again what failed to push, and say the sweeper is alive."""
    repush_pending()
    liveness.worker_beat()


class SweeperThread(threading.Thread):
    """The sweeper of a Celery worker process (a daemon thread)."""

    def __init__(self) -> None:
        super().__init__(name="deadline-sweeper", daemon=True)
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        last_housekeeping = 0.0
        while not self._stop_event.is_set():
            wait = MAX_SLEEP_S
            try:
                wait = sweep_once()
                if time.monotonic() - last_housekeeping >= HOUSEKEEPING_S:
                    housekeeping()
                    last_housekeeping = time.monotonic()
            except Exception:
                log.exception("sweeper pass failed")
            finally:
                close_old_connections()  # back to the pool; a broken one is dropped
            self._stop_event.wait(wait)
        close_old_connections()


_thread: SweeperThread | None = None


def start_thread() -> SweeperThread:
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = SweeperThread()
        _thread.start()
    return _thread


def stop_thread() -> None:
    global _thread
    if _thread is not None:
        _thread.stop()
        _thread.join(timeout=5)
        _thread = None
