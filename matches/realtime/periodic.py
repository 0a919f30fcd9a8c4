"""The web process's background work, on its event loop.

- a **tick** every 50 ms (``liveness.loop_tick_ms``): proof that the loop,
  which stamps every frame, is turning; the pulse thread reports it;
- the **pulse thread** (``liveness``): proof of life for the sweepers, and
  outage detection;
- the **catch-up** pass every 2 s (``realtime.catchup``): a socket a push never
  reached is sent the current view;
- in the embedded default (``MATCH_SWEEPER = "web"``: no Celery) also what the
  Celery worker and beat do otherwise: the deadline **sweeper**, its
  housekeeping, the ranked queue's sweep every 2 s, and the arenas' jobs
  (``tournaments.periodic``).

Started by the server runner (``config/serve.py``) when the process starts,
and otherwise by the first WebSocket (``ensure_started``): Channels has no
start-up hook, and ``AppConfig.ready`` runs in management commands too.

Off under tests (``settings.TESTING``) unless ``MATCH_BACKGROUND = True``: a
test that moves the clock must not have a stray loop resolve its matches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from matches import conf
from matches.clock import liveness, sweeper
from matches.play import db, dbpool

log = logging.getLogger(__name__)

TICK_S = 0.05
QUEUE_SWEEP_S = 2.0

_tasks: list[asyncio.Task[None]] = []
# ``(period_s, job)`` run like the queue's sweep where the sweeper runs (apps
# above matches register theirs here: social's Web Push "your turn").
EXTRA_JOBS: list[tuple[float, Callable[..., Any]]] = []
_loop: asyncio.AbstractEventLoop | None = None


def enabled() -> bool:
    return conf.background()


def sweeps_here() -> bool:
    """Whether this web process runs the deadline sweeper (the embedded default)."""
    return conf.sweeper() == "web"


def ensure_started() -> None:
    """Start the background work on the running event loop, once per loop (idempotent)."""
    global _loop
    if not enabled():
        return
    loop = asyncio.get_running_loop()
    if _loop is loop and all(not t.done() for t in _tasks):
        return
    for t in _tasks:
        t.cancel()
    _tasks.clear()
    _loop = loop
    from matches.realtime import broadcast

    broadcast.bind_loop(loop)
    liveness.loop_tick_ms = liveness._now_ms()
    _tasks.append(loop.create_task(_tick()))
    from matches.realtime import catchup

    _tasks.append(loop.create_task(catchup.run()))  # pushes that never arrived, made good
    liveness.start_pulse()
    if sweeps_here():
        from matches.lobby import matchmaking as queue

        _tasks.append(loop.create_task(_sweep()))
        _tasks.append(loop.create_task(_every(sweeper.HOUSEKEEPING_S, sweeper.housekeeping)))
        _tasks.append(loop.create_task(_every(QUEUE_SWEEP_S, queue.sweep)))
        from tournaments.periodic import jobs as arena_jobs  # arenas: pairing, pushes, schedule

        _tasks.extend(loop.create_task(_every(period, job)) for period, job in arena_jobs())
        for period_s, job in EXTRA_JOBS:
            _tasks.append(loop.create_task(_every(period_s, job)))


async def stop() -> None:
    """Stop the background work and wait until none is running (shutdown, tests)."""
    global _loop
    tasks = list(_tasks)
    _tasks.clear()
    _loop = None
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    liveness.stop_pulse()


async def _tick() -> None:
    from matches.play import admission

    loop = asyncio.get_running_loop()
    while True:
        liveness.note_tick(liveness._now_ms())
        before = loop.time()
        await asyncio.sleep(TICK_S)
        # How late the loop came back: every frame of the process waited as long.
        admission.note_loop_lag((loop.time() - before - TICK_S) * 1000)


async def _sweep() -> None:
    while True:
        wait = sweeper.MAX_SLEEP_S
        try:
            wait = await db.run(sweeper.sweep_once)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("sweeper pass failed")
        await asyncio.sleep(wait)


async def _every(period_s: float, job: Callable[..., Any], *args: Any) -> None:
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        with dbpool.lane(dbpool.BACKGROUND):  # housekeeping: after live matches' frames
            running = asyncio.ensure_future(db.run(job, *args))
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            await asyncio.wait([running])  # a job is never cut off halfway
            raise
        except Exception:
            log.exception("background job %s failed", getattr(job, "__name__", job))
        await asyncio.sleep(max(0.0, period_s - (loop.time() - started)))
