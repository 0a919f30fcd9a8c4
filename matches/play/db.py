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

Each of these threads keeps its connection for good (a fixed number of them,
so the count stays bounded: with PostgreSQL they are ``MATCH_DB_THREADS`` of
the pool's ``DB_POOL_SIZE``). Opening and closing one per call, as Django does
per request, cost more than the move itself — and closing SQLite's last
connection checkpoints its write-ahead log. A connection that saw an error and
no longer answers is closed, and the next call opens a new one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.db import connections

from matches import conf
from matches.play.dbpool import PriorityExecutor

T = TypeVar("T")

_executor: PriorityExecutor | None = None
_lock = threading.Lock()


def executor() -> PriorityExecutor:
    global _executor
    with _lock:
        if _executor is None:
            # A live match's frames first (matches/play/dbpool.py).
            _executor = PriorityExecutor(
                max_workers=conf.match_db_threads(),
                thread_name_prefix="match-db",
            )
        return _executor


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, on this thread's lasting connection."""
    try:
        return fn(*args, **kwargs)
    finally:
        for conn in connections.all(initialized_only=True):
            if conn.errors_occurred:
                conn.errors_occurred = False
                if conn.connection is not None and not conn.is_usable():
                    conn.close()


def close_connections() -> None:
    """Close the connection each match thread holds (tests, before the database goes)."""
    global _executor
    with _lock:
        pool, _executor = _executor, None
    if pool is None:
        return
    n = pool._max_workers
    barrier = threading.Barrier(n, timeout=5)

    def close_here() -> None:
        # One task per thread: each waits for the others, so each lands on its own thread.
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        connections.close_all()

    for _ in range(n):
        pool.submit(close_here)
    pool.shutdown(wait=True)


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` on a database thread and return its result."""
    on_thread = sync_to_async(call, thread_sensitive=False, executor=executor())
    return await on_thread(fn, *args, **kwargs)
