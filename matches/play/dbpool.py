"""The match threads' executor: a fixed pool that serves urgent work first.

A live match's frames go before new sockets' handshakes (issue 14): with one
match thread on SQLite, a wave of reconnections queued its reads in front of
the moves of every match being played. Work is submitted with a priority
(:data:`PLAY` by default; :func:`lane` sets another for the calling task), and
the threads take the most urgent waiting call, first come first served within a
priority — but a handshake that has waited ``HANDSHAKE_AGE_S`` is taken every other
time, so a process whose threads never run out of moves still lets sockets in.
Each call's wait for a thread is reported to ``matches.play.admission`` (the
database pool's wait) by lane: a live match's and a handshake's, each against its
own limit; the background lane's is not, as it waits behind the others by design.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any, NamedTuple

PLAY = 0  # a live match's frames, the sweeper's deadlines
HANDSHAKE = 1  # a new socket's reads
BACKGROUND = 2  # housekeeping, the queue's pairing

# A handshake waiting this long is served every other time, before a live match's
# frames: a process saturated by moves still lets sockets back in (half its threads'
# turns at most), and play still has the other half.
HANDSHAKE_AGE_S = 0.5

_priority: contextvars.ContextVar[int] = contextvars.ContextVar("db_priority", default=PLAY)


@contextlib.contextmanager
def lane(priority: int) -> Iterator[None]:
    """Submit the calling task's database work at ``priority`` inside the block."""
    token = _priority.set(priority)
    try:
        yield
    finally:
        _priority.reset(token)


class _Call(NamedTuple):
    queued_at: float
    future: Future[Any]
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class PriorityExecutor(Executor):
    """``max_workers`` threads taking the most urgent lane's oldest call first, except
    that a handshake waiting ``handshake_age_s`` or more is taken every other time."""

    def __init__(
        self,
        max_workers: int,
        thread_name_prefix: str = "match-db",
        handshake_age_s: float = HANDSHAKE_AGE_S,
    ) -> None:
        self._max_workers = max_workers
        self._handshake_age_s = handshake_age_s
        self._lanes: dict[int, deque[_Call]] = {}
        self._waiting = 0
        self._aged_last = False  # the last call taken was an aged handshake
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
            call = _Call(time.monotonic(), future, fn, args, kwargs)
            priority = _priority.get()
            lane = self._lanes.get(priority)
            if lane is None:
                lane = self._lanes[priority] = deque()
                self._lanes = dict(sorted(self._lanes.items()))  # most urgent first
            lane.append(call)
            self._waiting += 1
            self._cv.notify()
        return future

    def queued(self) -> int:
        with self._cv:
            return self._waiting

    def _take(self) -> tuple[int, _Call]:
        """The next call (the condition held, one waiting): a handshake that has waited
        ``handshake_age_s`` goes before a live match's frames, every other time. With strict
        priority alone, a process carrying every match after the other one's fault kept
        handshakes waiting 2.2–2.8 s behind its moves in the drill at 500 (1.4–1.5 s
        with this); the sockets' late tenth then was mostly the listen backlog
        (config/serve.py), but no wait here should depend on play thinning out."""
        self._waiting -= 1
        handshakes = self._lanes.get(HANDSHAKE)
        if (
            handshakes
            and not self._aged_last
            and time.monotonic() - handshakes[0].queued_at >= self._handshake_age_s
        ):
            self._aged_last = True
            return HANDSHAKE, handshakes.popleft()
        self._aged_last = False
        for priority, lane in self._lanes.items():
            if lane:
                return priority, lane.popleft()
        raise AssertionError("nothing waiting")

    def _work(self) -> None:
        from . import admission

        while True:
            with self._cv:
                while not self._waiting and not self._shutdown:
                    self._cv.wait()
                if not self._waiting:
                    return  # shut down and drained
                priority, (queued_at, future, fn, args, kwargs) = self._take()
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
                for lane in self._lanes.values():
                    for call in lane:
                        call.future.cancel()
                    lane.clear()
                self._waiting = 0
            self._cv.notify_all()
        if wait:
            for t in self._threads:
                if t is not threading.current_thread():
                    t.join()
