"""The channel layers: Channels' in-memory layer made to scale (the embedded default),
and channels-redis's pub/sub layer with publishes that do not queue, whose change
frames reach the publishing process's own sockets without Redis (Redis).

- ``InMemoryChannelLayer`` walks every channel and every group to drop expired
  messages on every ``send`` and ``receive`` — with a few hundred sockets that
  walk cost more than the move it carried. Expired messages only need dropping
  now and then: here the walk runs at most once a second.
- It deep-copies every message it delivers, so that a receiver cannot change
  what another receives. Every message of this project is built for its send
  and never changed after (a match view in it is shared read-only: receivers
  copy before they change anything), so the copy is skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer
from channels_redis.pubsub import (
    RedisPubSubChannelLayer,
    RedisPubSubLoopLayer,
    RedisSingleShardConnection,
)
from channels_redis.utils import _wrap_close

CLEAN_EVERY_S = 1.0


class InMemoryLayer(InMemoryChannelLayer):  # type: ignore[misc]
    _cleaned_at = 0.0

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        # InMemoryChannelLayer.send, less the deepcopy (see the module docstring).
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self.channels.setdefault(channel, asyncio.Queue(maxsize=self.get_capacity(channel)))
        try:
            queue.put_nowait((time.time() + self.expiry, message))
        except asyncio.queues.QueueFull:
            raise ChannelFull(channel) from None

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY_S:
            return
        self._cleaned_at = now
        super()._clean_expired()


# --- Redis ----------------------------------------------------------------------------


@dataclass
class _Change:
    """Channels to subscribe to (or, ``join=False``, to unsubscribe from) in one command."""

    join: bool
    channels: set[str] = field(default_factory=set)
    done: asyncio.Future[None] = field(default_factory=lambda: _loop().create_future())


def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


class _Shard(RedisSingleShardConnection):  # type: ignore[misc]
    """One Redis host of :class:`RedisPubSubLayer`: publishes that wait for nobody,
    and subscriptions that wait for a wave together, not one after another.

    channels-redis sends every publish of a process under one lock, the one that
    also guards its subscriptions: each publish waited for the one before it to
    come back from Redis, and for every subscription a new socket was making. On
    a busy event loop every round trip is a trip around the loop, so at 200 live
    matches a change's frames left 60 ms after their commit at the median and up
    to a second at p99, queued behind each other (issue 14; README). A publish
    needs no lock: the client takes a connection of its pool for each command.

    Each subscription still went alone behind that lock: a socket's handshake makes
    three (its own channel, its match's audience, its user's group), and each took
    a few trips around the loop to pass the lock on. In a reconnect wave of a
    thousand sockets on a saturated loop that was the most of a handshake's time
    (p90 1.9–2.5 s in the drill at 500; README). Now the subscriptions and
    unsubscriptions asked for while one command is on its way are queued in order,
    and those next to each other of the same kind go to Redis as one command.
    """

    def __init__(self, host: Any, channel_layer: Any) -> None:
        super().__init__(host, channel_layer)
        self._changes: deque[_Change] = deque()
        self._changer: asyncio.Task[None] | None = None

    async def subscribe(self, channel: str) -> None:
        if channel in self._subscribed_to and self._changer is None:
            return  # and no unsubscription of it is queued or on its way: nothing to ask
        await self._change(True, channel)

    async def unsubscribe(self, channel: str) -> None:
        await self._change(False, channel)

    async def _change(self, join: bool, channel: str) -> None:
        changes = self._changes
        if not changes or changes[-1].join is not join:
            changes.append(_Change(join))
        change = changes[-1]
        change.channels.add(channel)
        if self._changer is None:
            self._changer = asyncio.ensure_future(self._make_changes())
        # Shielded: a caller that is cancelled (its socket went) does not cancel the
        # others' subscriptions sent with its own.
        await asyncio.shield(change.done)

    async def _make_changes(self) -> None:
        changes = self._changes
        try:
            while changes:
                change = changes.popleft()  # later callers start the next one
                try:
                    async with self._lock:
                        self._ensure_redis()
                        self._ensure_receiver()
                        if change.join:
                            new = [c for c in change.channels if c not in self._subscribed_to]
                            if new:
                                await self._pubsub.subscribe(*new)
                                self._subscribed_to.update(new)
                        else:
                            gone = [c for c in change.channels if c in self._subscribed_to]
                            if gone:
                                await self._pubsub.unsubscribe(*gone)
                                self._subscribed_to.difference_update(gone)
                except Exception as error:  # Redis is down: each caller raises it
                    change.done.set_exception(error)
                    change.done.exception()  # retrieved: no "never retrieved" log if none waits
                except BaseException:
                    change.done.cancel()
                    raise
                else:
                    change.done.set_result(None)
        finally:
            if self._changer is asyncio.current_task():
                self._changer = None

    async def flush(self) -> None:
        changer, self._changer = self._changer, None
        if changer is not None:
            changer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await changer
        for change in self._changes:
            change.done.cancel()
        self._changes.clear()
        await super().flush()

    async def publish(self, channel: str, message: bytes) -> None:
        self._ensure_redis()  # no await in it: nothing can run in between
        await self._redis.publish(channel, message)

    def _receive_message(self, message: dict[str, Any] | None) -> None:
        # A change's frame this process published and has delivered to its own
        # sockets already (``group_send_many``) comes back from Redis: dropped
        # before it is even decoded. Another process's is passed on, less its mark.
        if message is not None:
            data = message["data"]
            if data[:1] == ORIGIN_MARK:
                if data.startswith(self.channel_layer.origin):
                    return
                message["data"] = data[ORIGIN_LEN:]
        super()._receive_message(message)

    async def publish_many(self, pairs: list[tuple[str, bytes]]) -> None:
        """Each ``(channel, message)`` published, all in one round trip."""
        self._ensure_redis()
        pipe = self._redis.pipeline(transaction=False)
        for channel, message in pairs:
            pipe.publish(channel, message)
        await pipe.execute()


class _LoopLayer(RedisPubSubLoopLayer):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shards = [_Shard(s.host, self) for s in self._shards]
        # What this layer's messages are marked with (a layer per event loop: one
        # loop's members are not another's, so each drops only its own).
        self.origin = ORIGIN_MARK + os.urandom(ORIGIN_LEN - 1)

    async def group_send_many(
        self,
        sends: list[tuple[str, dict[str, Any]]],
        local: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        remote: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        # This process's own members of each group get their message at once, from
        # here (``local`` makes theirs from the one sent: no encoding either way);
        # Redis carries it to the other processes' (``remote`` completes it for them,
        # once this process's are served), marked as this process's so that its copy
        # is dropped here when it comes back.
        for group, message in sends:
            members = self.groups.get(self._get_group_channel_name(group))
            if members:
                mine = local(group, message) if local is not None else message
                for channel in members:
                    queue = self.channels.get(channel)
                    if queue is not None:
                        queue.put_nowait(mine)
        origin = self.origin
        by_shard: dict[_Shard, list[tuple[str, bytes]]] = {}
        for group, message in sends:
            name = self._get_group_channel_name(group)
            pairs = by_shard.setdefault(self._get_shard(name), [])
            out = remote(group, message) if remote is not None else message
            pairs.append((name, origin + self.channel_layer.serialize(out)))
        await asyncio.gather(*(shard.publish_many(p) for shard, p in by_shard.items()))


# The first byte of a message published by :meth:`_LoopLayer.group_send_many` (a msgpack
# message, a map, never begins with it), then the publishing loop layer's 8 random bytes.
ORIGIN_MARK = b"\x00"
ORIGIN_LEN = 9


class RedisPubSubLayer(RedisPubSubChannelLayer):  # type: ignore[misc]
    """channels-redis's pub/sub layer, with :class:`_Shard`'s publishes, and
    :meth:`group_send_many`: a change's frames to all its audiences in one round trip,
    to this process's own sockets without Redis."""

    def deserialize(self, message: Any) -> Any:
        # A message delivered in-process is the sender's dict itself (group_send_many).
        if isinstance(message, dict):
            return message
        return super().deserialize(message)

    def _get_layer(self) -> _LoopLayer:
        loop = asyncio.get_running_loop()
        layer = self._layers.get(loop)
        if layer is None:
            layer = _LoopLayer(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            _wrap_close(self, loop)
        return layer  # type: ignore[no-any-return]

    async def group_send_many(
        self,
        sends: list[tuple[str, dict[str, Any]]],
        local: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        remote: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        """``group_send`` of each ``(group, message)``, published together to the other
        processes (as ``remote(group, message)``, made after this process's are served);
        this process's members of a group are handed ``local(group, message)`` (or the
        message) directly, never through Redis."""
        await self._get_layer().group_send_many(sends, local, remote)
