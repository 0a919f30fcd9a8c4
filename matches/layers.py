"""The embedded default's channel layer: Channels' in-memory layer, made to scale.

``InMemoryChannelLayer`` walks every channel and every group to drop expired
messages on every ``send`` and ``receive`` — with a few hundred sockets that
walk cost more than the move it carried. Expired messages only need dropping
now and then: here the walk runs at most once a second.
"""

from __future__ import annotations

import time

from channels.layers import InMemoryChannelLayer

CLEAN_EVERY_S = 1.0


class InMemoryLayer(InMemoryChannelLayer):  # type: ignore[misc]
    _cleaned_at = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at < CLEAN_EVERY_S:
            return
        self._cleaned_at = now
        super()._clean_expired()
