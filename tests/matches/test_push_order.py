"""A change's frames go to its audiences' groups at once, the seat to act first.

On Redis each group's send is a round trip: one after the other, the opponent of a
mover whose seat came first waited for the mover's own frame (and, after it, the
spectators waited for both). The seat whose turn the change began is the one whose
clock runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from matches.realtime import broadcast


class Change:
    match_id = 7
    version = 12
    received_at = None
    audiences = ("seat0", "seat1", "watch")

    def __init__(self, to_act: int | None) -> None:
        self.to_act = to_act

    def frame(self, audience: str) -> str:
        return f'{{"audience": "{audience}"}}'


class Layer:
    """A channel layer whose sends return only once every audience's send has begun."""

    def __init__(self, audiences: int) -> None:
        self.begun: list[str] = []
        self.all_begun = asyncio.Event()
        self.audiences = audiences
        self.fail: str | None = None

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.begun.append(group)
        if len(self.begun) == self.audiences:
            self.all_begun.set()
        await asyncio.wait_for(self.all_begun.wait(), 5)  # one at a time: never set
        if group == self.fail:
            raise ConnectionError("Redis went away")


async def test_the_seat_to_act_is_sent_first_and_no_audience_waits_for_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = Layer(3)
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)
    await broadcast._send_change(Change(to_act=1))
    assert layer.begun == ["match.7.seat1", "match.7.seat0", "match.7.watch"]


async def test_a_send_that_fails_still_fails_the_push_and_the_others_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A failed push is marked for the sweeper to push again (broadcast._send_after).
    layer = Layer(3)
    layer.fail = "match.7.seat0"
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)
    with pytest.raises(ConnectionError):
        await broadcast._send_change(Change(to_act=None))
    assert sorted(layer.begun) == ["match.7.seat0", "match.7.seat1", "match.7.watch"]
