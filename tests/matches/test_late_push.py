"""A push that reaches a seat late is not charged to that seat (issue 14).

In a reconnect wave at 500 matches the surviving web process took up to 8 s to
push a move to the sockets still connected to it, and the opponent's clock ran
meanwhile (10 s of main time charged in one drill). Each socket notes when it was
pushed the view that made its seat the one to act; when the seat acts, the push's
lateness past ``PUSH_BOUND_MS`` after its decision began is given back. A socket's
first view is its push from the handshake's arrival (stamped by the transport): a
turn that began while we were opening the socket waited for us, and a turn older
than the socket is given only our handshake's own time past the bound. A view got
otherwise (a sync, a stale answer) owes nothing: a client cannot buy time by
reconnecting or asking again.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from matchplay import live_casual
from wsclient import Socket, login_headers, open_socket

import engine
from config.asgi import application
from matches.models import Match, MatchEvent
from matches.play import late_push, timing
from matches.play.act import PUSH_BOUND_MS, act, credit_late_push
from matches.play.credit import LastCredit
from tests.support import frame_for

pytestmark = pytest.mark.django_db(transaction=True)

LATE_MS = 3_000


@pytest.fixture
def shifted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The server's clock, moved on by ``shift["ms"]`` (a push that waits that long),
    or standing still at ``shift["at"]`` while that is set (a handshake that takes no
    time, however slow the machine)."""
    shift = {"ms": 0}
    real = timing.now_ms

    def now_ms() -> int:
        return shift["at"] if "at" in shift else real() + shift["ms"]

    monkeypatch.setattr(timing, "now_ms", now_ms)
    return shift


def _started(alice: Any, bob: Any) -> tuple[Match, Any, Any]:
    """A live casual match: (it, the player to act, the other)."""
    m = live_casual(alice, bob)
    s = engine.from_dict(m.state)
    assert s.to_act is not None and engine.deadline(s) is not None
    mover = alice if s.to_act in m.seats_of(alice.pk) else bob
    return m, mover, bob if mover is alice else alice


def _a_decision(m: Match) -> dict[str, Any]:
    return frame_for(engine.legal_actions(engine.from_dict(m.state))[0], m.version)


async def _move(m: Match, user: Any, at: int) -> Match:
    frame = _a_decision(m)
    await database_sync_to_async(act)(m.pk, user, frame, at)
    await m.arefresh_from_db()
    return m


def _push_credits(m: Match) -> list[dict[str, Any]]:
    return [
        e.data
        for e in MatchEvent.objects.filter(match=m, kind="credit").order_by("pk")
        if e.data.get("push")
    ]


async def test_a_turn_pushed_three_seconds_late_is_given_back_when_the_seat_acts(
    alice: Any, bob: Any, shifted: dict[str, int]
) -> None:
    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    sock = await open_socket(m.pk, waiter)
    try:
        assert sock.frames[0]["version"] == m.version
        t = timing.now_ms()
        # The mover's decision is committed at t; its push reaches the waiter's socket
        # LATE_MS later (our loop was busy): the socket notes its turn then.
        shifted["ms"] = LATE_MS
        m = await _move(m, mover, t)
        frame = await sock.state_at(m.version)
        assert frame["view"]["to_act"] in m.seats_of(waiter.pk)
        await sock.send(_a_decision(m))  # it acts at once, LATE_MS after its turn began
        await sock.state_at(m.version + 1)
        given = await database_sync_to_async(_push_credits)(m)
        assert len(given) == 1
        assert given[0]["player"] in m.seats_of(waiter.pk)
        # The push's lateness less the bound (the socket's clock read a few ms after it).
        assert LATE_MS - PUSH_BOUND_MS <= given[0]["ms"] <= LATE_MS - PUSH_BOUND_MS + 200
    finally:
        await sock.comm.disconnect()


async def test_a_turn_older_than_a_prompt_handshake_is_owed_nothing(
    alice: Any, bob: Any, shifted: dict[str, int]
) -> None:
    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    t = timing.now_ms()
    m = await _move(m, mover, t)
    shifted["ms"] = LATE_MS  # the waiter (re)connects LATE_MS after its turn began
    # Its handshake takes no time on the server's clock: on a slow machine a real one
    # can outlast the bound and be owed (rightly) what it took past it.
    shifted["at"] = timing.now_ms()
    try:
        sock = await open_socket(m.pk, waiter)
    finally:
        del shifted["at"]
    try:
        assert sock.frames[0]["version"] == m.version
        await sock.send(_a_decision(m))
        await sock.state_at(m.version + 1)
        assert await database_sync_to_async(_push_credits)(m) == []
    finally:
        await sock.comm.disconnect()


async def test_a_turn_that_began_while_the_socket_was_opening_is_given_back(
    alice: Any, bob: Any, shifted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The waiter reconnects; while its handshake waits behind our backlog the mover
    # moves, and the socket's first view (showing its turn) goes out LATE_MS later.
    from matches.realtime import match_consumer

    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    read = match_consumer._first_view
    began: list[float] = []

    def busy_first_view(*args: Any) -> Any:
        m.refresh_from_db()
        began.append(time.monotonic())
        act(m.pk, mover, _a_decision(m), timing.now_ms())  # committed mid-handshake
        shifted["ms"] = LATE_MS
        return read(*args)

    monkeypatch.setattr(match_consumer, "_first_view", busy_first_view)
    sock = await open_socket(m.pk, waiter)
    try:
        await m.arefresh_from_db()
        assert sock.frames[0]["version"] == m.version
        assert sock.frames[0]["view"]["to_act"] in m.seats_of(waiter.pk)
        # The real time from the turn's start to the first view here is ours too (the act's
        # commit, the view's build): a slow machine took 300 ms of it (CI, engine 37 µs).
        # Read once the socket's turn is surely noted (after the frame and a read), plus
        # 2 ms: the turn's start and the push are each stamped in whole ms, rounded down
        # (a run credited 2,906 ms where 2,900 + 5.9 was read here too soon).
        real_ms = (time.monotonic() - began[0]) * 1000 + 2
        await sock.send(_a_decision(m))
        await sock.state_at(m.version + 1)
        given = await database_sync_to_async(_push_credits)(m)
        assert len(given) == 1 and given[0]["player"] in m.seats_of(waiter.pk)
        assert LATE_MS - PUSH_BOUND_MS - 200 <= given[0]["ms"] <= LATE_MS - PUSH_BOUND_MS + real_ms
    finally:
        await sock.comm.disconnect()


async def test_a_turn_older_than_the_socket_is_given_only_the_handshakes_wait(
    alice: Any, bob: Any, shifted: dict[str, int]
) -> None:
    # The turn began at t; the player came back at t + 1 s (its own absence: not
    # given), and its handshake, stamped then by the transport, was answered only at
    # t + LATE_MS (ours: given, less the bound).
    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    t = timing.now_ms()
    m = await _move(m, mover, t)
    shifted["ms"] = LATE_MS
    headers = await database_sync_to_async(login_headers)(waiter)
    comm = WebsocketCommunicator(application, f"/ws/matches/{m.pk}/", headers=headers)
    await comm.send_input({"type": "websocket.connect", "received_at": t + 1_000})
    assert (await comm.receive_output(timeout=10))["type"] == "websocket.accept"
    sock = Socket(comm)
    try:
        assert (await sock.recv())["version"] == m.version
        await sock.send(_a_decision(m))
        await sock.state_at(m.version + 1)
        given = await database_sync_to_async(_push_credits)(m)
        assert len(given) == 1
        expected = LATE_MS - 1_000 - PUSH_BOUND_MS
        assert expected <= given[0]["ms"] <= expected + 200
    finally:
        await comm.disconnect()


async def test_a_push_on_time_gives_nothing(alice: Any, bob: Any) -> None:
    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    sock = await open_socket(m.pk, waiter)
    try:
        assert sock.frames[0]["version"] == m.version
        m = await _move(m, mover, timing.now_ms())
        await sock.state_at(m.version)
        await sock.send(_a_decision(m))
        await sock.state_at(m.version + 1)
        assert await database_sync_to_async(_push_credits)(m) == []
    finally:
        await sock.comm.disconnect()


def test_time_an_earlier_credit_gave_is_not_given_again(alice: Any, bob: Any) -> None:
    m, _, _ = _started(alice, bob)
    s = engine.from_dict(m.state)
    start = s.decision_start
    assert start is not None
    # An outage already gave back the decision's first 2 s.
    LastCredit(ms=2_000, seat=s.to_act, to=start + 2_000, through=start + 2_000).save_to(m)
    events: list[dict[str, Any]] = []
    after = credit_late_push(m, s, start + LATE_MS, start + LATE_MS + 500, events)
    assert [e["ms"] for e in events] == [LATE_MS - PUSH_BOUND_MS - 2_000]
    assert after.decision_start == start + LATE_MS - PUSH_BOUND_MS - 2_000
    assert LastCredit.of(m).given_through() == start + LATE_MS - PUSH_BOUND_MS  # type: ignore[union-attr]
    # Pushed within the bound: nothing.
    events.clear()
    credit_late_push(m, s, start + PUSH_BOUND_MS, start + 1_000, events)
    assert events == []


async def test_a_flag_buys_no_second_credit_for_the_same_turn(
    alice: Any, bob: Any, shifted: dict[str, int]
) -> None:
    # A client may send `flag` whenever it likes. It is given the late push once; the
    # change that flag makes (a credit, the seat still to act) is pushed back to it,
    # and must not count as a new turn whose wait is given again.
    m, mover, waiter = await database_sync_to_async(_started)(alice, bob)
    sock = await open_socket(m.pk, waiter)
    try:
        t = timing.now_ms()
        shifted["ms"] = LATE_MS
        m = await _move(m, mover, t)
        await sock.state_at(m.version)
        await sock.send({"op": "flag", "version": m.version})
        await sock.state_at(m.version + 1)  # the credit, pushed back to it
        await m.arefresh_from_db()
        shifted["ms"] = 2 * LATE_MS  # it thinks 3 s more, then flags and acts
        await sock.send({"op": "flag", "version": m.version})
        await sock.send(_a_decision(m))
        mine = m.seats_of(waiter.pk)
        await sock.until(lambda f: f["type"] == "state" and f["view"]["to_act"] not in mine)
        given = await database_sync_to_async(_push_credits)(m)
        assert len(given) == 1 and given[0]["ms"] <= LATE_MS - PUSH_BOUND_MS + 200
    finally:
        await sock.comm.disconnect()


async def test_a_socket_on_redis_notes_a_turn_pushed_late_for_whoever_gives_time_without_it(
    alice: Any, bob: Any, on_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the socket dies before its seat acts, the lateness is still given back
    (tests/voiding/test_late_push_outlives_socket.py)."""
    m = await database_sync_to_async(live_casual)(alice, bob)
    s = engine.from_dict(m.state)
    mover = alice if s.to_act in m.seats_of(alice.pk) else bob
    waiter = bob if mover is alice else alice
    sock = await open_socket(m.pk, waiter)
    try:
        shift = {"ms": 0}
        real = timing.now_ms
        monkeypatch.setattr(timing, "now_ms", lambda: real() + shift["ms"])
        # The socket writes its note off the loop: the test waits for that write itself.
        written = threading.Event()
        note = late_push.note

        def noting(*args: Any) -> None:
            note(*args)
            written.set()

        monkeypatch.setattr(late_push, "note", noting)
        t = timing.now_ms()
        shift["ms"] = 2_000  # the push reaches the socket 2 s after the move's receipt
        frame = frame_for(engine.legal_actions(s)[0], m.version)
        await database_sync_to_async(act)(m.pk, mover, frame, t)
        pushed = await sock.state_at(m.version + 1)
        seat = pushed["view"]["to_act"]
        assert seat in m.seats_of(waiter.pk)
        assert await asyncio.to_thread(written.wait, 10), "the late push was never noted"
        noted = late_push.read_one(m.pk, seat)
        assert noted is not None and noted.pushed_at >= t + 2_000 and noted.since is None
    finally:
        await sock.comm.disconnect()
