"""The embedded default's channel layer: Channels' in-memory layer, made to scale.

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
import time
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

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
