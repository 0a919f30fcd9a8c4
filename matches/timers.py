"""The deadline backstop: wake up at a match's next deadline even if nobody writes.

With ``MATCH_TIMERS = "celery"`` (``REDIS_URL`` set) a Celery task is queued
with an ETA, so any worker can do it. In the embedded default an asyncio
timer in the ASGI process does it. Either way the work is
``services.check_match(match_id, version)``, which is idempotent: a timer
scheduled for an old version does nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from datetime import UTC, datetime

from asgiref.sync import sync_to_async
from django.conf import settings

log = logging.getLogger(__name__)

# A frame stamped just before the deadline may still be on its way to the row
# lock; the backstop waits this long after the deadline so it never beats such
# a frame to the lock. Frames themselves are judged by their receipt time.
GRACE_MS = 100

_loop: asyncio.AbstractEventLoop | None = None
# match id -> (version, timer); only the newest version's timer is kept.
_handles: dict[int, tuple[int, asyncio.TimerHandle]] = {}


def bind_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the ASGI process's event loop (called from consumers on connect)."""
    global _loop
    _loop = loop


def schedule(match_id: int, version: int, at_ms: int) -> None:
    """Look at the match (as of ``version``) at ``at_ms`` epoch milliseconds."""
    if getattr(settings, "MATCH_TIMERS", "asyncio") == "celery":
        from .tasks import check_match

        eta = datetime.fromtimestamp((at_ms + GRACE_MS) / 1000, tz=UTC)
        check_match.apply_async((match_id, version), eta=eta)
        return
    loop = _loop
    if loop is None or loop.is_closed():
        log.debug("no event loop for the deadline timer of match %s", match_id)
        return
    # A fresh context: the caller is a thread-sensitive sync_to_async thread
    # (an on_commit hook), whose context marks asgiref's single thread as busy;
    # inherited by the timer, it made the backstop's sync_to_async refuse to run
    # ("Single thread executor already being used, would deadlock").
    loop.call_soon_threadsafe(_arm, loop, match_id, version, at_ms, context=contextvars.Context())


def _arm(loop: asyncio.AbstractEventLoop, match_id: int, version: int, at_ms: int) -> None:
    from .services import now_ms

    old = _handles.get(match_id)
    if old is not None:
        if old[0] > version:
            return  # a newer version's timer is armed already (commits can race here)
        old[1].cancel()
    delay = max(0.0, (at_ms + GRACE_MS - now_ms()) / 1000)
    _handles[match_id] = (version, loop.call_later(delay, _fire, match_id, version))


def _fire(match_id: int, version: int) -> None:
    from .services import check_match

    if match_id in _handles and _handles[match_id][0] == version:
        del _handles[match_id]
    task = asyncio.ensure_future(sync_to_async(check_match)(match_id, version))
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Future[bool]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("deadline check failed", exc_info=task.exception())


def pending() -> dict[int, int]:
    """The armed asyncio timers: match id -> the version each was scheduled for."""
    return {k: v[0] for k, v in _handles.items()}
