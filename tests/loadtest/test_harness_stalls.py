"""The harness keeps its own collector's pauses out of the windows it times."""

from __future__ import annotations

import asyncio
import gc

from loadtest.stalls import GC_THRESHOLD, Stalls, settle_heap


def test_a_window_starts_with_the_heap_frozen_and_the_collector_restored_after() -> None:
    before = gc.get_threshold()
    survivors = [[i] for i in range(50_000)]  # a level's records, made before its window

    async def run() -> None:
        stalls = Stalls()
        stalls.start()
        try:
            assert gc.get_threshold() == GC_THRESHOLD
            settle_heap()
            # Everything made before the window is out of the collector's reach: a full
            # collection in the window scans none of it.
            assert gc.get_freeze_count() >= len(survivors)
            gc.collect()
            assert stalls.gc and stalls.gc[-1][2] == 2  # its pause is still recorded
        finally:
            await stalls.stop()

    asyncio.run(run())
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    assert len(survivors) == 50_000
