"""A web process's start-up pushes wait for its loop (``broadcast.defer_until_bound``).

``config.serve`` beats before it listens, and a restart of the whole tier credits the
outage to every open match then: at 500 matches, 500 changes pushed one by one, each
through a loop of its own, held the process 1.7 s from listening. They are pushed from
the loop once it runs instead, in commit order, each to its own audiences only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from channels.layers import get_channel_layer

from matches.play.store import current_change, publish
from matches.realtime import broadcast
from tests.support import live_casual

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def unbound() -> Iterator[None]:
    """No loop bound to the broadcaster (a process before its reactor runs)."""
    saved = broadcast._loop, broadcast._loop_thread, broadcast._deferred
    broadcast._loop, broadcast._loop_thread, broadcast._deferred = None, None, None
    yield
    broadcast._loop, broadcast._loop_thread, broadcast._deferred = saved


async def _received(layer: Any, channel: str, within: float = 5.0) -> dict[str, Any] | None:
    try:
        return await asyncio.wait_for(layer.receive(channel), within)
    except TimeoutError:
        return None


async def test_changes_committed_before_the_loop_runs_are_pushed_once_it_does(
    alice: Any, bob: Any, carol: Any, dave: Any, unbound: None
) -> None:
    from channels.db import database_sync_to_async

    first = await database_sync_to_async(live_casual)(alice, bob)
    second = await database_sync_to_async(live_casual)(carol, dave)
    layer = get_channel_layer()
    channels = {}
    for m in (first, second):
        channels[m.pk] = await layer.new_channel()
        await layer.group_add(broadcast.group_name(m.pk, "seat0"), channels[m.pk])

    broadcast.defer_until_bound()
    for m in (first, second):
        change = await database_sync_to_async(current_change)(m.pk)
        assert change is not None
        publish(change)  # the start-up beat's credit, committed before the reactor runs
    # Nothing was sent: no loop of its own per change before the process listens.
    assert await _received(layer, channels[first.pk], within=0.3) is None

    broadcast.bind_loop(asyncio.get_running_loop())  # the reactor runs
    for m in (first, second):
        got = await _received(layer, channels[m.pk])
        assert got is not None and got["type"] == "match.frame"
        assert got["version"] == m.version
    assert broadcast._deferred is None  # from now on pushed as they commit
