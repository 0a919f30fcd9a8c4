"""The web process's background loop, started lazily by the first WebSocket.

Every web process beats once a second (``voiding.beat("web")``). In the
embedded default (``MATCH_TIMERS = "asyncio"``: no Celery) the same loop also
does what Celery beat does otherwise (``CELERY_BEAT_SCHEDULE``): the
matchmaking sweep and the fault scan + voids, every 2 s. With Celery, those run
on the workers and the web loop only beats.

Started from the consumers' ``connect`` (``ensure_started()``), like
``timers.bind_loop``: Channels has no start-up hook and ``AppConfig.ready`` runs
in management commands too. The jobs run on their own threads
(``thread_sensitive=False``), so a slow query elsewhere never delays a beat.

Off under tests (``settings.TESTING``) unless ``MATCH_BACKGROUND = True``: a
test that moves the clock must not have a stray loop void its matches.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

log = logging.getLogger(__name__)

BEAT_EVERY_S = 1.0
SWEEP_EVERY_S = 2.0

_tasks: list[asyncio.Task[None]] = []
_loop: asyncio.AbstractEventLoop | None = None
_atexit_registered = False


def enabled() -> bool:
    return bool(getattr(settings, "MATCH_BACKGROUND", not getattr(settings, "TESTING", False)))


def ensure_started() -> None:
    """Start the loop's jobs on the running event loop, once per loop (idempotent)."""
    global _loop, _atexit_registered
    if not enabled():
        return
    loop = asyncio.get_running_loop()
    if _loop is loop and all(not t.done() for t in _tasks):
        return
    for t in _tasks:
        t.cancel()
    _tasks.clear()
    _loop = loop
    from . import timers, voiding

    timers.bind_loop(loop)  # the sweep makes matches whose start timers live here
    _tasks.append(loop.create_task(_every(BEAT_EVERY_S, voiding.beat, "web")))
    if getattr(settings, "MATCH_TIMERS", "asyncio") != "celery":
        from . import queue

        _tasks.append(loop.create_task(_every(SWEEP_EVERY_S, queue.sweep)))
        _tasks.append(loop.create_task(_every(SWEEP_EVERY_S, voiding.scan_and_void)))
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_goodbye)


async def stop() -> None:
    """Cancel the jobs and wait until none is running (tests)."""
    global _loop
    tasks = list(_tasks)
    _tasks.clear()
    _loop = None
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _closing(job: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        try:
            return job(*args)
        finally:
            # A pool thread keeps no connection between runs.
            connections.close_all()

    return run


async def _every(period_s: float, job: Callable[..., Any], *args: Any) -> None:
    run = sync_to_async(_closing(job), thread_sensitive=False)
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        running = asyncio.ensure_future(run(*args))
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            await asyncio.wait([running])  # a job is never cut off halfway
            raise
        except Exception:
            log.exception("background job %s failed", getattr(job, "__name__", job))
        await asyncio.sleep(max(0.0, period_s - (loop.time() - started)))


def _goodbye() -> None:
    # A clean exit is not a fault: this process is no longer expected to beat.
    try:
        from .voiding import retire

        retire()
    except Exception:
        log.debug("could not retire this process's heartbeat", exc_info=True)
