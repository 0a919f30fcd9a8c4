"""Django's HTTP requests on reused threads, so the event loop never waits for one to start.

Django's ``ASGIHandler`` runs each request's sync code (middleware, views, the
ORM) in a ``ThreadSensitiveContext`` of its own: a new one-thread executor per
request, started on the first sync call and shut down — joined — at the end.
Both the start (``Thread.start`` waits until the new thread runs) and the join
happen on the event loop's thread. Under a burst of requests (a reconnect wave's
page loads, 20 new matches a second) the loop spent its stalls there: py-spy
sampled ``Thread.start`` 67 times in the embedded default's worst ticks, each
wait as long as the new thread took to get the GIL from the busy ones.

:class:`PooledASGIHandler` gives each request a one-thread executor from a pool
instead (asgiref's ``ThreadSensitiveContext(executor=...)``: the caller owns it,
nothing is shut down on exit). The semantics stay Django's: one request's sync
code runs on one thread, one call at a time, and two requests never share a
thread at once. Threads are started only when more requests are in flight than
ever before, and at most :data:`IDLE_KEPT` idle ones are kept.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler

IDLE_KEPT = 32  # idle request threads kept for the next burst


class ExecutorPool:
    """One-thread executors handed out one per request and taken back after it."""

    def __init__(self, idle_kept: int = IDLE_KEPT) -> None:
        self.idle: list[ThreadPoolExecutor] = []
        self.idle_kept = idle_kept
        self.started = 0  # executors ever made (each starts its thread on first use)

    def take(self) -> ThreadPoolExecutor:
        if self.idle:
            return self.idle.pop()
        self.started += 1
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="http")

    def give(self, executor: ThreadPoolExecutor) -> None:
        if len(self.idle) < self.idle_kept:
            self.idle.append(executor)
        else:
            executor.shutdown(wait=False)  # its thread ends by itself; the loop never joins it


pool = ExecutorPool()


class PooledASGIHandler(ASGIHandler):
    """Django's ASGI handler with each request's thread taken from :data:`pool`."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = pool.take()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            pool.give(executor)


def get_asgi_application() -> PooledASGIHandler:
    """``django.core.asgi.get_asgi_application`` with the pooled handler."""
    import django

    django.setup(set_prefix=False)
    return PooledASGIHandler()
