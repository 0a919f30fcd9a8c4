"""A change committed while a socket connects must still reach it.

``MatchConsumer.connect`` finds the socket's audience, joins the audience's
group, and only then reads the view: a change committed before the read is in
it, and one committed after it is pushed to the group, which the socket reads
once connect returns. `make drill` found seats stuck when the view was read
before the group was joined, after a web process died and every socket
reconnected at once while the matches went on: the seat waited for a move that
had been made, its clock running, until another reconnection (or a loss on time).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from matchplay import new_casual
from wsclient import open_socket

import engine
from matches.play import timing
from matches.play.act import act
from matches.realtime import match_consumer as consumers

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_change_committed_between_the_first_view_and_joining_the_group_arrives(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    first_view = consumers._open

    def alice_starts_meanwhile(scope: dict[str, Any], match_id: int) -> Any:
        found = first_view(scope, match_id)  # bob's socket has read version 0...
        # ...when alice's Start commits (version 1) and is pushed to both seats' groups.
        act(match_id, alice, {"op": "start", "version": 0}, timing.now_ms())
        return found

    monkeypatch.setattr(consumers, "_open", alice_starts_meanwhile)
    bob_socket = await open_socket(match.pk, bob)
    try:
        frame = bob_socket.frames[0]  # the view read first, or a fresher one
        if frame["version"] < 1:
            frame = await asyncio.wait_for(bob_socket.state_at(1), timeout=3)
        assert frame["version"] == 1 and frame["view"]["match"]["ready"] == [True, False]
    finally:
        await bob_socket.comm.disconnect()


async def test_a_change_committed_just_after_the_first_view_was_read_arrives_next(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    first_view = consumers._first_view

    def alice_starts_meanwhile(*args: Any) -> Any:
        view = first_view(*args)  # bob's socket read version 0...
        # ...and alice's Start commits (version 1) before his socket is accepted.
        act(args[1], alice, {"op": "start", "version": 0}, timing.now_ms())  # (scope, match id, …)
        return view

    monkeypatch.setattr(consumers, "_first_view", alice_starts_meanwhile)
    bob_socket = await open_socket(match.pk, bob)
    try:
        assert bob_socket.frames[0]["version"] == 0
        frame = await asyncio.wait_for(bob_socket.state_at(1), timeout=3)
        assert frame["version"] == 1 and frame["view"]["match"]["ready"] == [True, False]
    finally:
        await bob_socket.comm.disconnect()


async def test_the_seat_whose_decision_our_outage_cut_is_given_back_its_way_back(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the web tier was down, the time until the seat to act is back is ours: its
    socket reconnecting is given the time until then, but does not end the hold (in a
    wave its view may reach it seconds later); its first action does, given the rest."""
    from matches.clock import liveness
    from matches.models import MatchEvent
    from tests.support import frame_for

    def outage() -> tuple[int, int, Any]:
        m = new_casual(alice, bob)
        for u in (alice, bob):
            act(m.pk, u, {"op": "start", "version": 0}, timing.now_ms())
        m.refresh_from_db()
        state = engine.from_dict(m.state)
        start = state.decision_start + 100
        liveness.beat(start, "web-a")
        back = start + 13_100
        assert liveness.beat(back, "web-b") == [m.pk]
        mover = alice if state.to_act in m.seats_of(alice.pk) else bob
        return m.pk, back, mover

    def credits() -> list[dict[str, Any]]:
        found = MatchEvent.objects.filter(match_id=match_id, kind="credit").order_by("pk")
        return [e.data for e in found]

    match_id, back, mover = await database_sync_to_async(outage)()
    monkeypatch.setattr(timing, "now_ms", lambda: back + 1_500)  # the page is back 1.5 s later
    sock = await open_socket(match_id, mover)
    try:
        frame = sock.frames[0]
        if frame["view"]["match"]["credit"]["ms"] == 13_100:
            frame = await asyncio.wait_for(sock.until(lambda f: f.get("type") == "state"), 3)
        credit = frame["view"]["match"]["credit"]
        # Its clock reads right at once: the 1.5 s are given; but it is still held.
        assert credit["ms"] == 13_100 + 1_500 and credit["rejoin_until"] > back + 1_500
        assert [c.get("rejoin") and c["ms"] for c in await database_sync_to_async(credits)()] == [
            None,
            1_500,
        ]
        # Its first action 2.5 s later (its view may have reached it late): given too.
        monkeypatch.setattr(timing, "now_ms", lambda: back + 4_000)
        version = frame["view"]["match"]["version"]
        legal = engine.legal_actions(
            engine.from_dict(await database_sync_to_async(_state)(match_id))
        )
        await sock.send(frame_for(legal[0], version))
        moved = await asyncio.wait_for(
            sock.until(
                lambda f: f.get("type") == "state" and f["view"]["match"]["version"] > version
            ),
            3,
        )
        assert moved["view"]["match"]["credit"]["ms"] == 13_100 + 4_000
        # Its hold is over (its opponent's socket is still away: that one stays).
        assert moved["view"]["match"]["credit"].get("away") == [1 - legal[0].player]
        rejoined = (await database_sync_to_async(credits)())[-1]
        assert rejoined["rejoin"] and rejoined["ms"] == 2_500
        assert rejoined["from"] == back + 1_500
    finally:
        await sock.comm.disconnect()


def _state(match_id: int) -> dict[str, Any]:
    from matches.models import Match

    return Match.objects.get(pk=match_id).state


async def test_after_our_outage_only_the_seat_to_act_takes_its_rows_lock_on_connecting(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconnect wave locks the row only for the seats with time to be given back:
    a seat not to act has nothing to be given yet (its first action will be)."""
    from matches.clock import liveness

    def outage() -> tuple[int, int, Any, Any]:
        m = new_casual(alice, bob)
        for u in (alice, bob):
            act(m.pk, u, {"op": "start", "version": 0}, timing.now_ms())
        m.refresh_from_db()
        state = engine.from_dict(m.state)
        liveness.beat(state.decision_start + 100, "web-a")
        back = state.decision_start + 5_100
        assert liveness.beat(back, "web-b") == [m.pk]
        mover = alice if state.to_act in m.seats_of(alice.pk) else bob
        return m.pk, back, mover, bob if mover is alice else alice

    match_id, back, mover, waiter = await database_sync_to_async(outage)()
    monkeypatch.setattr(timing, "now_ms", lambda: back + 1_500)  # the pages are back 1.5 s later
    rejoined: list[Any] = []
    real = consumers.rejoin

    def counted(match_id: int, user: Any, *args: Any, **kwargs: Any) -> bool:
        rejoined.append(user)
        return real(match_id, user, *args, **kwargs)

    monkeypatch.setattr(consumers, "rejoin", counted)
    waiting = await open_socket(match_id, waiter)
    moving = await open_socket(match_id, mover)
    try:
        assert waiting.frames[0]["view"]["match"]["credit"]["rejoin_until"]
        # The mover's way back is given (a new version, pushed once its row is written).
        version = moving.frames[0]["version"]
        await asyncio.wait_for(moving.state_at(version + 1), timeout=3)
        assert rejoined == [mover]
    finally:
        await waiting.comm.disconnect()
        await moving.comm.disconnect()
