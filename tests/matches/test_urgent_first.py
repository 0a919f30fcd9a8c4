"""A change reaches the seat to act's socket before the mover's own (issue 14).

In a web process under the services set-up the mover's consumer, awake on the event
loop as its move's call returned, took its own frame first: on an idle server the
opponent's frame waited for the mover's page to be rendered (1.3 ms of a 6 ms move,
measured with the drill's bots), while the opponent's clock ran. The frames of one
change for this process's sockets now carry a gate: the others wait until the seat to
act's socket has been sent it (``broadcast.URGENT_FIRST_S`` at most).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from wsclient import open_socket

import engine
from matches.realtime import broadcast
from matches.realtime.match_consumer import MatchConsumer
from tests.support import frame_for, live_casual

MOVES = 6


class _Change:
    """What ``_LocalFrames`` reads of a change."""

    def __init__(self, to_act: int | None) -> None:
        self.to_act = to_act
        self.audiences = ["seat0", "seat1", "watch"]

    def view(self, audience: str) -> dict[str, Any]:
        return {"audience": audience}


async def _sent_in_order(frames: dict[str, dict[str, Any]], first: list[str]) -> list[str]:
    """Each audience's consumer handling its frame as ``MatchConsumer.match_frame``
    does; those in ``first`` start before the others (as the mover's, already awake)."""
    order: list[str] = []

    async def consumer(audience: str) -> None:
        event = frames[audience]
        await broadcast.urgent_first(event)
        try:
            order.append(audience)
        finally:
            broadcast.urgent_sent(event)

    early = [asyncio.ensure_future(consumer(a)) for a in first]
    await asyncio.sleep(0)
    late = [asyncio.ensure_future(consumer(a)) for a in frames if a not in first]
    await asyncio.wait_for(asyncio.gather(*early, *late), timeout=5)
    return order


def _frames(change: _Change, audiences: list[str]) -> dict[str, dict[str, Any]]:
    local = broadcast._LocalFrames(change)
    message = {"type": "match.frame", "version": 7}
    return {a: local(message, a) for a in broadcast._urgent_first(change) if a in audiences}


async def test_the_mover_and_the_spectators_wait_until_the_seat_to_act_is_sent_a_change() -> None:
    frames = _frames(_Change(to_act=1), ["seat0", "seat1", "watch"])
    order = await _sent_in_order(frames, first=["seat0", "watch"])
    assert order[0] == "seat1"
    assert sorted(order[1:]) == ["seat0", "watch"]


async def test_no_wait_when_the_seat_to_act_has_no_socket_here() -> None:
    frames = _frames(_Change(to_act=1), ["seat0", "watch"])  # seat 1 on another process
    assert not any("after" in f or "urgent" in f for f in frames.values())
    assert await _sent_in_order(frames, first=["seat0"]) == ["seat0", "watch"]


async def test_no_wait_between_hands_when_nobody_is_to_act() -> None:
    frames = _frames(_Change(to_act=None), ["seat0", "seat1", "watch"])
    assert not any("after" in f or "urgent" in f for f in frames.values())


async def test_a_seat_to_act_whose_socket_never_takes_its_frame_holds_the_others_briefly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(broadcast, "URGENT_FIRST_S", 0.01)
    frames = _frames(_Change(to_act=0), ["seat0", "seat1"])
    # seat 0's consumer never handles its frame (its socket closing, say): seat 1 still is sent it.
    await asyncio.wait_for(broadcast.urgent_first(frames["seat1"]), timeout=5)


@pytest.mark.django_db(transaction=True)
async def test_in_play_the_seat_to_act_is_sent_each_change_first(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The consumers themselves, move after move: the seat to act's socket is sent the
    change before the mover's."""
    sent: dict[int, list[bool]] = {}
    real = MatchConsumer._match_frame

    async def recording(self: MatchConsumer, event: dict[str, Any]) -> None:
        await real(self, event)
        sent.setdefault(event["version"], []).append(event.get("to_act") in self.seats)

    monkeypatch.setattr(MatchConsumer, "_match_frame", recording)
    m = await database_sync_to_async(live_casual)(alice, bob)
    socks = {alice.pk: await open_socket(m.pk, alice), bob.pk: await open_socket(m.pk, bob)}
    try:
        for _ in range(MOVES):
            await m.arefresh_from_db()
            state = engine.from_dict(m.state)
            assert state.to_act is not None
            mover = alice if state.to_act in m.seats_of(alice.pk) else bob
            await socks[mover.pk].send(frame_for(engine.legal_actions(state)[0], m.version))
            for s in socks.values():
                await s.state_at(m.version + 1)
    finally:
        for s in socks.values():
            await s.comm.disconnect()
    changes = [sent[v] for v in sorted(sent) if len(sent[v]) == 2 and any(sent[v])]
    assert len(changes) >= MOVES // 2
    assert all(order[0] for order in changes), changes
