"""The harness's own stalls: its event loop's lateness and its garbage collector's pauses.

Every latency the load harness reports is timed by its own event loop: a frame that
arrived while the harness was busy (a collection of its few million recorded objects,
a burst of bots' work) is timed late, and the server is blamed for it. So a run
watches itself, and each level's row says how late the harness was in its window:
a p99 the harness's own stalls explain is not the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from typing import Any

TICK_S = 0.02
# The harness's collector, as the web processes' (config.settings.GC_THRESHOLD): young
# collections rarer than Python's 700,10,10. With the defaults and everything recorded
# since the start scanned again by each full collection, the harness paused up to
# 0.2–0.37 s at 500–1,250 matches (this file's own figures), inside the windows it times.
GC_THRESHOLD = (20_000, 20, 10)


def settle_heap() -> None:
    """Before a window: collect once, then freeze what is alive (the accounts, the
    earlier levels' records), so that no collection in the window scans it again."""
    gc.collect()
    gc.freeze()


class Stalls:
    """Records (when, seconds late) of each late tick and (when, seconds) of each GC pause."""

    def __init__(self) -> None:
        self.late: list[tuple[float, float]] = []
        self.gc: list[tuple[float, float, int]] = []  # (end, seconds, generation)
        self._task: asyncio.Task[None] | None = None
        self._gc_started: float | None = None
        self._threshold = gc.get_threshold()

    def start(self) -> None:
        self._threshold = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLD)
        gc.callbacks.append(self._on_gc)
        self._task = asyncio.ensure_future(self._tick())

    async def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._on_gc)
        gc.set_threshold(*self._threshold)
        gc.unfreeze()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._gc_started = now
        elif self._gc_started is not None:
            self.gc.append((time.monotonic(), now - self._gc_started, int(info["generation"])))
            self._gc_started = None

    async def _tick(self) -> None:
        while True:
            due = time.monotonic() + TICK_S
            await asyncio.sleep(TICK_S)
            late = time.monotonic() - due
            if late > 0.005:
                self.late.append((time.monotonic(), late))

    def between(self, t0: float, t1: float) -> dict[str, Any]:
        """The window's figures: the worst lateness, time spent late past 100 ms, GC pauses."""
        late = [s for t, s in self.late if t0 <= t < t1]
        pauses = [(s, g) for t, s, g in self.gc if t0 <= t < t1]
        return {
            "loop_late_max_ms": round(max(late, default=0.0) * 1000, 1),
            "loop_late_over_100ms": sum(1 for s in late if s > 0.1),
            "gc_pause_max_ms": round(max((s for s, _ in pauses), default=0.0) * 1000, 1),
            "gc_pause_total_ms": round(sum(s for s, _ in pauses) * 1000, 1),
            "gc_full": sum(1 for _, g in pauses if g == 2),
        }
