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


# --- a process's own sockets are served without Redis -------------------------------
#
# Two layers are two web processes (each its own connections to Redis and its own
# sockets). A change's frames reach the sockets of the process that committed it
# straight from that process, as the change itself (its view, not text to decode);
# Redis carries them to the other process, and the committing process drops its own
# copy when Redis sends it back.


@pytest.fixture
async def other(require_redis: str, layer: Any) -> Any:
    """A second web process's layer, on the same Redis channels as ``layer``."""
    made = RedisPubSubLayer(**{**layer._kwargs})
    yield made
    await made.flush()


def _with_view(group: str, message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "view": {"for": group}}


async def test_a_frame_reaches_this_process_s_socket_without_waiting_for_redis(
    layer: Any,
) -> None:
    here = await _member(layer, "match.4.seat1")
    shard = layer._get_layer()._shards[0]
    asked, answered = asyncio.Event(), asyncio.Event()
    publish_many = shard.publish_many

    async def slow_publish(pairs: Any) -> Any:
        asked.set()
        await answered.wait()  # Redis is slow to take the publish
        return await publish_many(pairs)

    shard.publish_many = slow_publish
    sending = asyncio.ensure_future(
        layer.group_send_many([("match.4.seat1", {"type": "match.frame", "text": "t"})], _with_view)
    )
    try:
        await asyncio.wait_for(asked.wait(), 5)
        got = await asyncio.wait_for(layer.receive(here), 5)
        assert not sending.done()  # Redis has not even been sent it
        assert got == {"type": "match.frame", "text": "t", "view": {"for": "match.4.seat1"}}
    finally:
        answered.set()
        await sending


async def test_each_process_s_socket_gets_a_frame_once(layer: Any, other: Any) -> None:
    here = await _member(layer, "match.5.seat0")
    there = await _member(other, "match.5.seat0")
    await layer.group_send_many(
        [("match.5.seat0", {"type": "match.frame", "version": 1})], _with_view
    )
    # The other process's socket: Redis's copy, decoded (no view went through Redis).
    assert await asyncio.wait_for(other.receive(there), 5) == {"type": "match.frame", "version": 1}
    # The other process's next change, published after the first one came back from
    # Redis: had this process not dropped its own copy, that copy would come first.
    await other.group_send_many([("match.5.seat0", {"type": "match.frame", "version": 2})])
    first = await asyncio.wait_for(layer.receive(here), 5)
    assert first["version"] == 1 and first["view"] == {"for": "match.5.seat0"}
    second = await asyncio.wait_for(layer.receive(here), 5)
    assert second == {"type": "match.frame", "version": 2}  # not version 1 a second time
    # And the other side got its own change once, from itself.
    assert (await asyncio.wait_for(other.receive(there), 5))["version"] == 2


async def test_a_group_with_no_socket_here_is_still_reached_through_redis(
    layer: Any, other: Any
) -> None:
    there = await _member(other, "match.6.watch")
    await layer.group_send_many(
        [("match.6.watch", {"type": "match.frame", "version": 3})], _with_view
    )
    assert await asyncio.wait_for(other.receive(there), 5) == {"type": "match.frame", "version": 3}


async def test_a_plain_group_send_of_this_process_still_comes_through_redis(layer: Any) -> None:
    # Only a change's frames (group_send_many) are handed over in-process: a message
    # sent the usual way (a session's end, the lobby's) reaches this process's sockets
    # through Redis as before, never dropped as one already delivered.
    here = await _member(layer, "user.7")
    await layer.group_send("user.7", {"type": "session.ended"})
    assert await asyncio.wait_for(layer.receive(here), 5) == {"type": "session.ended"}


async def test_the_text_for_other_processes_is_made_after_this_process_s_sockets_are_served(
    layer: Any, other: Any
) -> None:
    # Encoding each audience's JSON text took the loop before the seat to act was handed
    # its frame; this process's sockets never read that text.
    here = await _member(layer, "match.8.seat1")
    there = await _member(other, "match.8.seat1")
    served_first: list[int] = []

    def remote(group: str, message: dict[str, Any]) -> dict[str, Any]:
        served_first.append(layer._get_layer().channels[here].qsize())
        return {**message, "text": f"the text for {group}"}

    await layer.group_send_many(
        [("match.8.seat1", {"type": "match.frame", "version": 4})], _with_view, remote
    )
    assert served_first == [1]  # this process's socket had its frame already
    got = await asyncio.wait_for(layer.receive(here), 5)
    assert got == {"type": "match.frame", "version": 4, "view": {"for": "match.8.seat1"}}
    assert await asyncio.wait_for(other.receive(there), 5) == {
        "type": "match.frame",
        "version": 4,
        "text": "the text for match.8.seat1",
    }


# --- A reconnect wave's subscriptions -----------------------------------------------
# Each socket's handshake subscribes three times (its channel, its match's audience, its
# user's group). channels-redis sent each alone behind the shard's lock, a few trips
# around a saturated loop each: in the drill at 500 a wave's handshakes spent p90 2 s
# there. Subscriptions asked for while one is on its way now go to Redis together.


def _count_subscribes(shard: Any) -> list[int]:
    sizes: list[int] = []
    subscribe = shard._pubsub.subscribe

    async def counted(*channels: Any) -> Any:
        sizes.append(len(channels))
        return await subscribe(*channels)

    shard._pubsub.subscribe = counted
    return sizes


async def test_a_wave_of_sockets_joins_its_groups_in_a_few_commands(layer: Any, other: Any) -> None:
    await _member(layer, "user.0")  # the shard's connection is made
    sizes = _count_subscribes(layer._get_layer()._shards[0])
    wave = 200
    channels = await asyncio.wait_for(
        asyncio.gather(*(_member(layer, f"match.{n}.seat0") for n in range(wave))), 10
    )
    assert sum(sizes) == 2 * wave  # each socket's channel and its group, each once
    assert len(sizes) <= 6, sizes  # not 400 commands one after another
    # Subscribed for real: another process's frame to each group reaches its socket.
    for n in range(wave):
        await other.group_send(f"match.{n}.seat0", {"type": "match.frame", "version": n})
    for n, channel in enumerate(channels):
        assert await asyncio.wait_for(layer.receive(channel), 5) == {
            "type": "match.frame",
            "version": n,
        }


async def _numsub(url: str, *channels: str) -> dict[str, int]:
    import redis.asyncio as redis

    client = redis.Redis.from_url(url)
    try:
        pairs = await client.pubsub_numsub(*channels)
    finally:
        await client.aclose()
    return {name.decode(): count for name, count in pairs}


def _held(shard: Any, command: str = "subscribe") -> tuple[asyncio.Event, asyncio.Event]:
    """The shard's next ``command`` (its pub/sub's method) waits until ``answered`` (Redis
    slow to take it); ``asked`` is set once it is on its way."""
    asked, answered = asyncio.Event(), asyncio.Event()
    send = getattr(shard._pubsub, command)

    async def slow(*channels: Any) -> Any:
        asked.set()
        await answered.wait()
        setattr(shard._pubsub, command, send)
        return await send(*channels)

    setattr(shard._pubsub, command, slow)
    return asked, answered


async def test_subscriptions_and_unsubscriptions_keep_the_order_they_were_asked_in(
    layer: Any, require_redis: str
) -> None:
    await _member(layer, "user.0")
    shard = layer._get_layer()._shards[0]
    stem = f"sborder{uuid.uuid4().hex[:8]}"
    again, gone = f"{stem}.again", f"{stem}.gone"
    asked, answered = _held(shard)
    first = asyncio.ensure_future(shard.subscribe(f"{stem}.first"))
    await asyncio.wait_for(asked.wait(), 5)
    # While that command is on its way: joined, left and joined again; joined and left.
    calls = [
        asyncio.ensure_future(call)
        for call in (
            shard.subscribe(again),
            shard.subscribe(gone),
            shard.unsubscribe(again),
            shard.unsubscribe(gone),
            shard.subscribe(again),
        )
    ]
    answered.set()
    await asyncio.wait_for(asyncio.gather(first, *calls), 5)
    assert await _numsub(require_redis, again, gone) == {again: 1, gone: 0}
    assert again in shard._subscribed_to and gone not in shard._subscribed_to


async def test_joining_a_group_while_its_unsubscription_is_on_its_way_ends_subscribed(
    layer: Any, other: Any
) -> None:
    # The group's last socket left (its UNSUBSCRIBE is on its way, Redis slow to take it)
    # when a new socket joins it: the new socket must still get the group's frames.
    gone = await _member(layer, "match.40.seat0")
    here = await layer.new_channel()  # the new socket, its channel made
    shard = layer._get_layer()._shards[0]
    asked, answered = _held(shard, "unsubscribe")
    leaving = asyncio.ensure_future(layer.group_discard("match.40.seat0", gone))
    await asyncio.wait_for(asked.wait(), 5)
    joining = asyncio.ensure_future(layer.group_add("match.40.seat0", here))
    answered.set()
    await asyncio.wait_for(asyncio.gather(leaving, joining), 5)
    await other.group_send("match.40.seat0", {"type": "match.frame", "version": 40})
    assert await asyncio.wait_for(layer.receive(here), 5) == {"type": "match.frame", "version": 40}


async def test_a_socket_that_goes_mid_handshake_leaves_the_others_subscriptions_alone(
    layer: Any, other: Any
) -> None:
    await _member(layer, "user.0")
    shard = layer._get_layer()._shards[0]
    asked, answered = _held(shard)
    holding = asyncio.ensure_future(_member(layer, "match.20.seat0"))
    await asyncio.wait_for(asked.wait(), 5)
    # Told when the second of the two sockets below asks for its channel: by the time this
    # test runs again, that call has queued it (queuing happens before its first await).
    queued, asking = asyncio.Event(), [0]
    change = shard._change

    async def counted(join: bool, channel: str) -> None:
        asking[0] += 1
        if asking[0] == 2:
            queued.set()
        await change(join, channel)

    shard._change = counted
    leaving = asyncio.ensure_future(_member(layer, "match.21.seat0"))
    staying = asyncio.ensure_future(_member(layer, "match.22.seat0"))
    await asyncio.wait_for(queued.wait(), 5)
    assert sum(len(c.channels) for c in shard._changes) == 2  # both wait for the next command
    leaving.cancel()
    answered.set()
    here = await asyncio.wait_for(staying, 5)
    await asyncio.wait_for(holding, 5)
    with pytest.raises(asyncio.CancelledError):
        await leaving
    await other.group_send("match.22.seat0", {"type": "match.frame", "version": 22})
    assert await asyncio.wait_for(layer.receive(here), 5) == {"type": "match.frame", "version": 22}


async def test_a_refused_subscription_fails_each_socket_that_waited_on_it_and_no_later_one(
    layer: Any, other: Any
) -> None:
    from redis.exceptions import ConnectionError as RedisDown

    await _member(layer, "user.0")
    shard = layer._get_layer()._shards[0]
    channels = [await layer.new_channel() for _ in range(2)]
    subscribe = shard._pubsub.subscribe

    async def down(*_: Any) -> Any:
        shard._pubsub.subscribe = subscribe  # Redis is back for the next command
        raise RedisDown("Redis went away")

    shard._pubsub.subscribe = down
    failed = await asyncio.gather(
        *(layer.group_add("match.30.seat0", channel) for channel in channels),
        return_exceptions=True,
    )
    assert [type(error) for error in failed] == [RedisDown, RedisDown]  # each consumer refuses
    await asyncio.wait_for(layer.group_add("match.30.seat0", channels[0]), 5)
    await other.group_send("match.30.seat0", {"type": "match.frame", "version": 30})
    assert (await asyncio.wait_for(layer.receive(channels[0]), 5))["version"] == 30
