"""A web process runs a few match handshakes at a time (matches/realtime/handshakes.py).

In a reconnect wave every handshake's steps queued on the event loop behind every
other's, and a page and a live match's frames waited behind the whole wave.
"""

from __future__ import annotations

import asyncio

import pytest

from matches.realtime import handshakes


async def test_at_most_a_few_handshakes_work_at_once_and_the_rest_wait_in_order() -> None:
    running, most, order = 0, 0, []
    release = asyncio.Event()

    async def handshake(i: int) -> None:
        nonlocal running, most
        async with handshakes.turn():
            order.append(i)
            running += 1
            most = max(most, running)
            await release.wait()
            running -= 1

    tasks = [asyncio.ensure_future(handshake(i)) for i in range(50)]
    await asyncio.sleep(0)
    for _ in range(10):  # let every task reach the gate
        await asyncio.sleep(0)
    assert running == handshakes.AT_ONCE == len(order)
    release.set()
    await asyncio.gather(*tasks)
    assert most == handshakes.AT_ONCE
    assert order == list(range(50))  # first come, first served


async def test_a_handshake_that_fails_or_is_dropped_gives_its_turn_back() -> None:
    async def fails() -> None:
        async with handshakes.turn():
            raise ConnectionError("the client went away")

    async def hangs() -> None:
        async with handshakes.turn():
            await asyncio.Event().wait()

    for _ in range(handshakes.AT_ONCE * 2):
        with pytest.raises(ConnectionError):
            await fails()
    stuck = [asyncio.ensure_future(hangs()) for _ in range(handshakes.AT_ONCE)]
    await asyncio.sleep(0)
    for t in stuck:  # the process closes their connections (a shutdown, a timeout)
        t.cancel()
    await asyncio.gather(*stuck, return_exceptions=True)
    done = []

    async def next_one() -> None:
        async with handshakes.turn():
            done.append(True)

    await asyncio.wait_for(next_one(), 2)
    assert done == [True]


def test_each_event_loop_has_its_own_turns() -> None:
    """A gate is bound to the loop it was made on: a second loop (a test's, a restarted
    server's) gets its own rather than one bound to a loop that is gone."""

    async def wave() -> None:
        async def take() -> None:
            async with handshakes.turn():
                await asyncio.sleep(0)

        # More than its turns: some wait, which binds the gate to this loop.
        await asyncio.gather(*(take() for _ in range(handshakes.AT_ONCE + 3)))

    asyncio.run(wave())
    asyncio.run(wave())
