"""The Redis channel layer's publishes wait for nobody (matches/realtime/layers.py).

channels-redis sent every publish of a process under the lock that guards its
subscriptions: a push waited for each push before it to come back from Redis, and
for every subscription a new socket was making. At 200 live matches on the
services set-up a change's frames left their process 60 ms after the commit at the
median and up to a second at p99; in a reconnect wave every socket subscribes at
once. The layer is configured as production configures it
(``config.settings.redis_channel_layer``), with this test's own prefix.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from config.settings import redis_channel_layer
from matches.realtime.layers import RedisPubSubLayer


@pytest.fixture
async def layer(require_redis: str) -> Any:
    config = redis_channel_layer(require_redis, prefix=f"sblayer{uuid.uuid4().hex[:8]}")
    made = RedisPubSubLayer(**config["CONFIG"])
    yield made
    await made.flush()


async def _member(layer: Any, group: str) -> str:
    channel: str = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def test_a_push_does_not_wait_for_a_subscription_redis_has_not_answered(
    layer: Any,
) -> None:
    listening = await _member(layer, "match.1.seat0")
    shard = layer._get_layer()._shards[0]
    asked, answered = asyncio.Event(), asyncio.Event()
    subscribe = shard._pubsub.subscribe

    async def slow_subscribe(*channels: Any) -> Any:
        asked.set()  # the new socket's subscription is under way, under the shard's lock
        await answered.wait()  # Redis is slow to take it
        return await subscribe(*channels)

    shard._pubsub.subscribe = slow_subscribe
    joining = asyncio.ensure_future(_member(layer, "match.2.seat1"))
    try:
        await asyncio.wait_for(asked.wait(), 5)
        assert not joining.done()
        await asyncio.wait_for(layer.group_send("match.1.seat0", {"type": "match.frame"}), 5)
        got = await asyncio.wait_for(layer.receive(listening), 5)
        assert got == {"type": "match.frame"}
        assert not joining.done()  # it was still waiting all along
    finally:
        answered.set()
        await joining


async def test_a_changes_frames_reach_each_audience_in_one_round_trip(layer: Any) -> None:
    seat0 = await _member(layer, "match.3.seat0")
    seat1 = await _member(layer, "match.3.seat1")
    watch = await _member(layer, "match.3.watch")
    shard = layer._get_layer()._shards[0]
    pipelines = []
    pipeline = shard._redis.pipeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        pipelines.append(1)
        return pipeline(*args, **kwargs)

    shard._redis.pipeline = counted
    await layer.group_send_many(
        [
            ("match.3.seat1", {"type": "match.frame", "text": "seat1's"}),
            ("match.3.seat0", {"type": "match.frame", "text": "seat0's"}),
            ("match.3.watch", {"type": "match.frame", "text": "the spectators'"}),
        ]
    )
    assert len(pipelines) == 1
    for channel, text in ((seat0, "seat0's"), (seat1, "seat1's"), (watch, "the spectators'")):
        got = await asyncio.wait_for(layer.receive(channel), 5)
        assert got["text"] == text  # its own frame, nobody else's
    for channel in (seat0, seat1, watch):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(layer.receive(channel), 0.2)
