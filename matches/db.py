"""The web process's database threads: where sockets' database work runs.

Django would run a consumer's ``database_sync_to_async`` calls on the one
thread shared with every HTTP view of the process (``thread_sensitive``), so a
slow page or a password hash stalled every move of every match. Match work runs
here instead, on a small pool of its own (``MATCH_DB_THREADS``: a few for
PostgreSQL, whose row locks let matches proceed side by side; one for SQLite,
which serializes every write anyway and would otherwise make its writers wait
on its file lock).

``run`` goes through asgiref's ``sync_to_async``, so code running here that
calls ``async_to_sync`` (a lobby push, say) is sent back to the event loop.
Connections are handled as ``database_sync_to_async`` does: closed (returned
to the pool, with PostgreSQL) when unusable or obsolete, before and after.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

T = TypeVar("T")

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=int(getattr(settings, "MATCH_DB_THREADS", 4)),
                thread_name_prefix="match-db",
            )
        return _executor


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with stale connections closed before and after."""
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` on a database thread and return its result."""
    on_thread = sync_to_async(call, thread_sensitive=False, executor=executor())
    return await on_thread(fn, *args, **kwargs)
