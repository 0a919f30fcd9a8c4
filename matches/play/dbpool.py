"""The match threads' executor: a fixed pool that serves urgent work first.

A live match's frames go before new sockets' handshakes (issue 14): with one
match thread on SQLite, a wave of reconnections queued its reads in front of
the moves of every match being played. Work is submitted with a priority
(:data:`PLAY` by default; :func:`lane` sets another for the calling task), and
the threads always take the most urgent waiting call, first come first served
within a priority. Each call's wait for a thread is reported to
``matches.play.admission`` (the database pool's wait) by lane: a live match's
and a handshake's, each against its own limit; the background lane's is not, as
it waits behind the others by design.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

PLAY = 0  # a live match's frames, the sweeper's deadlines
HANDSHAKE = 1  # a new socket's reads
BACKGROUND = 2  # housekeeping, the queue's pairing

_priority: contextvars.ContextVar[int] = contextvars.ContextVar("db_priority", default=PLAY)


@contextlib.contextmanager
def lane(priority: int) -> Iterator[None]:
    """Submit the calling task's database work at ``priority`` inside the block."""
    token = _priority.set(priority)
    try:
        yield
    finally:
        _priority.reset(token)


class PriorityExecutor(Executor):
    """``max_workers`` threads taking the lowest (priority, arrival) call first."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "match-db") -> None:
        self._max_workers = max_workers
        self._heap: list[tuple[int, int, float, Future[Any], Callable[..., Any], Any, Any]] = []
        self._order = itertools.count()
        self._cv = threading.Condition()
        self._shutdown = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{thread_name_prefix}_{i}", daemon=True)
            for i in range(max_workers)
        ]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._cv:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            entry = (_priority.get(), next(self._order), time.monotonic(), future, fn, args, kwargs)
            heapq.heappush(self._heap, entry)
            self._cv.notify()
        return future

    def queued(self) -> int:
        with self._cv:
            return len(self._heap)

    def _work(self) -> None:
        from . import admission

        while True:
            with self._cv:
                while not self._heap and not self._shutdown:
                    self._cv.wait()
                if not self._heap:
                    return  # shut down and drained
                priority, _, queued_at, future, fn, args, kwargs = heapq.heappop(self._heap)
            waited_ms = (time.monotonic() - queued_at) * 1000
            if priority == PLAY:
                admission.note_db_wait(waited_ms)
            elif priority == HANDSHAKE:
                admission.note_db_wait(waited_ms, lane="handshake")
            # The background lane waits behind the others by design: its wait says
            # nothing about the headroom a live match or a newcomer's socket has.
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as e:
                future.set_exception(e)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cv:
            self._shutdown = True
            if cancel_futures:
                for entry in self._heap:
                    entry[3].cancel()
                self._heap.clear()
            self._cv.notify_all()
        if wait:
            for t in self._threads:
                if t is not threading.current_thread():
                    t.join()
