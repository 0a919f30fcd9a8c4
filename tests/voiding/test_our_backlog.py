"""Our own backlog is never charged: a slow heartbeat write is no outage, a stalled loop's
frames are stamped as if read on time (matches/clock/liveness.py, matches/clock/receipt.py)."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from matches import conf
from matches.clock import liveness, receipt
from matches.clock.deadlines import check_match
from matches.clock.outage import rejoin
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.act import act

pytestmark = pytest.mark.django_db

T0 = 1_900_000_000_000


def _running(m: Match) -> tuple[int | None, int]:
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    assert s.main is not None and s.to_act is not None
    return engine.deadline(s), s.main[s.to_act]


def test_a_beat_written_late_by_a_process_that_was_alive_throughout_is_no_outage(
    alice: Any, bob: Any, live_ranked: Any
) -> None:
    m = live_ranked(alice, bob)
    before = _running(m)
    liveness.beat(T0, "web-a")
    # The next beat took 3 s to be written (SQLite's lock held by a burst of
    # moves), but the loop ticked all along: nobody was cut off.
    assert liveness.beat(T0 + 3_000, "web-a", alive_since=T0) == []
    assert _running(m) == before
    assert not MatchEvent.objects.filter(match=m, kind="credit").exists()
    # Without that proof the same silence is an outage, and given back.
    assert liveness.beat(T0 + 6_000, "web-a") == [m.pk]
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 1


def test_the_pulse_thread_proves_continuity_only_when_the_loop_never_stalled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beats: list[int | None] = []
    monkeypatch.setattr(liveness, "stopped_at_ms", None)
    monkeypatch.setattr(liveness, "loop_tick_ms", None)
    monkeypatch.setattr(liveness, "worst_tick_gap_ms", 0)
    monkeypatch.setattr(liveness, "beat", lambda tick, name, alive_since: beats.append(alive_since))
    monkeypatch.setattr(liveness, "pulse", lambda tick, name: None)
    pulse = liveness.PulseThread("web-a")

    def beat_after(ticks: list[int]) -> None:
        base = timing.now_ms() - ticks[-1]
        for t in ticks:
            liveness.note_tick(base + t)
        pulse._last_beat = 0.0  # a beat is due
        pulse.once()

    beat_after([0])
    assert beats == [None]  # the first beat proves nothing before itself
    first = liveness.loop_tick_ms
    beat_after(list(range(50, 1_050, 50)))  # ticking every 50 ms
    assert beats == [None, first]
    beat_after([1_100, 2_600])  # the loop stalled 1.5 s: no proof over that stretch
    assert beats[-1] is None


def test_a_frame_read_by_a_loop_on_time_is_stamped_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(liveness, "loop_tick_ms", T0)
    assert receipt.stamp(T0 + 40) == T0 + 40
    assert receipt.stamp(T0 + receipt.TICK_MS + receipt.LAG_BOUND_MS) == (
        T0 + receipt.TICK_MS + receipt.LAG_BOUND_MS
    )


def test_a_frame_read_after_a_stall_is_stamped_when_the_loop_was_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(liveness, "loop_tick_ms", T0)
    credited = receipt.credited_ms
    # The loop came back 2 s late: the frame may have waited in the kernel all that time.
    assert receipt.stamp(T0 + 2_000) == T0 + receipt.TICK_MS + receipt.LAG_BOUND_MS
    assert receipt.credited_ms - credited == 2_000 - receipt.TICK_MS - receipt.LAG_BOUND_MS


def test_the_stamp_comes_from_the_transport_never_from_the_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[dict[str, Any]] = []

    class Queue:
        def put_nowait(self, message: dict[str, Any]) -> None:
            sent.append(message)

    proto = receipt.StampedWebSocketProtocol.__new__(receipt.StampedWebSocketProtocol)
    proto.muted = False
    proto.application_queue = Queue()
    monkeypatch.setattr(liveness, "loop_tick_ms", timing.now_ms())
    before = timing.now_ms()
    proto.onMessage(b'{"op": "sync", "received_at": 1}', False)
    (msg,) = sent
    assert msg["type"] == "websocket.receive" and msg["text"].startswith('{"op"')
    assert before <= msg["received_at"] <= timing.now_ms()


def test_the_handshake_is_stamped_where_the_transport_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connect message carries the stamp taken when the upgrade request was read,
    however long the application instance took to be made after it."""
    sent: list[dict[str, Any]] = []
    logged: list[tuple[Any, ...]] = []

    class Queue:
        def put_nowait(self, message: dict[str, Any]) -> None:
            sent.append(message)

    class Server:
        def log_action(self, *args: Any) -> None:
            logged.append(args)

    class Request:
        path = "/ws/matches/1/"

    proto = receipt.StampedWebSocketProtocol.__new__(receipt.StampedWebSocketProtocol)
    proto.server, proto.request, proto.client_addr = Server(), Request(), ("10.0.0.1", 5)
    proto.connect_received_at = 1_000  # read then; the instance is made later
    proto.applicationCreateWorked(Queue())
    assert sent == [{"type": "websocket.connect", "received_at": 1_000}]
    assert logged == [
        ("websocket", "connecting", {"path": "/ws/matches/1/", "client": "10.0.0.1:5"})
    ]


def test_the_way_back_after_an_outage_grows_with_the_wave(
    alice: Any, bob: Any, carol: Any, dave: Any, live_ranked: Any, settings: Any
) -> None:
    """Every socket of every frozen match reconnects in one wave: the last in line is not
    charged for its length. Here 2 matches, 5 s + 2 × 3 s: 11 s to come back."""
    settings.OUTAGE_REJOIN_PER_MATCH_MS = 3_000
    m1, m2 = live_ranked(alice, bob), live_ranked(carol, dave)
    deadline, _ = _running(m1)
    start = deadline - 1_000  # one second left when the tier went silent
    liveness.beat(start, "web-a")
    back = start + 10_000
    assert sorted(liveness.beat(back, "web-b")) == sorted([m1.pk, m2.pk])
    m1.refresh_from_db()
    assert m1.wake_at_ms == back + conf.outage_rejoin_ms() + 2 * 3_000
    # 9 s after the server's return the seat is still in the wave: its clock has not run out.
    assert not check_match(m1.pk, None, back + 9_000)
    m1.refresh_from_db()
    assert m1.status == Match.Status.LIVE
    s = engine.from_dict(m1.state)
    mover = alice if s.to_act in m1.seats_of(alice.pk) else bob
    assert rejoin(m1.pk, mover, back + 9_500)  # back, 9.5 s later: nothing charged
    s = engine.from_dict(Match.objects.get(pk=m1.pk).state)
    assert engine.deadline(s) == back + 1_000 + 9_500


def test_a_seat_not_back_yet_when_its_decision_starts_is_not_charged_for_the_wave(
    alice: Any, bob: Any, live_ranked: Any, settings: Any
) -> None:
    """The seat whose decision the outage cut came back first and moved; its opponent's
    socket was still in the wave. That decision is held until it is back, and the time
    until then is given back."""
    from tests.support import frame_for

    settings.DEAL_SEED = 4  # the first move hands the turn to the other seat
    m = live_ranked(alice, bob)
    deadline, _ = _running(m)
    start = deadline - 60_000
    liveness.beat(start, "web-a")
    back = start + 10_000
    assert liveness.beat(back, "web-b") == [m.pk]
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    first = alice if s.to_act in m.seats_of(alice.pk) else bob
    second = bob if first is alice else alice
    assert rejoin(m.pk, first, back + 500)
    m.refresh_from_db()
    action = engine.legal_actions(engine.from_dict(m.state))[0]
    moved_at = back + 1_000
    out = act(m.pk, first, frame_for(action, m.version), moved_at)
    assert out.error is None
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    assert s.to_act in m.seats_of(second.pk)
    assert m.last_credit["away"] == [s.to_act]
    held_until = m.last_credit["rejoin_until"]
    assert m.wake_at_ms == max(engine.deadline(s), held_until)
    # The second seat's socket is back 3 s after the move: those 3 s are given back.
    before = engine.deadline(s)
    assert rejoin(m.pk, second, moved_at + 3_000)
    m.refresh_from_db()
    assert engine.deadline(engine.from_dict(m.state)) == before + 3_000
    assert "away" not in m.last_credit and "rejoin_until" not in m.last_credit
    # Once only.
    assert not rejoin(m.pk, second, moved_at + 4_000)


def test_an_outage_between_hands_holds_a_decision_that_starts_before_its_seat_is_back(
    alice: Any, bob: Any, live_ranked: Any
) -> None:
    """The drill at 200 matches: the outage hit a match in 次へ's window. After it, one
    player pressed 次へ and bid while the other, who had pressed 次へ before the outage,
    was still in the reconnect wave; the accept-or-decline that started then was charged
    (5–15 s a seat). It is held until that seat is back, and the time until then given."""
    from tests.support import frame_for

    m = live_ranked(alice, bob)
    t = timing.now_ms()
    for _ in range(400):  # play the first hand out (the first legal action each time)
        s = engine.from_dict(m.state)
        if s.phase == engine.HAND_OVER or m.is_over:
            break
        user = alice if s.to_act in m.seats_of(alice.pk) else bob
        t += 100
        assert act(m.pk, user, frame_for(engine.legal_actions(s)[0], m.version), t).error is None
        m.refresh_from_db()
    assert engine.from_dict(m.state).phase == engine.HAND_OVER and not m.is_over
    t += 100
    assert act(m.pk, alice, {"op": "continue", "version": m.version}, t).error is None
    m.refresh_from_db()
    start = t + 500
    liveness.beat(start, "web-a")
    back = start + 10_000
    assert liveness.beat(back, "web-b") == [m.pk]
    m.refresh_from_db()
    assert sorted(m.last_credit["away"]) == [0, 1]
    # Bob is back first: his 次へ deals the next hand.
    assert not rejoin(m.pk, bob, back + 500)
    m.refresh_from_db()
    assert act(m.pk, bob, {"op": "continue", "version": m.version}, back + 600).error is None
    m.refresh_from_db()
    # Whoever must decide first: if it is bob, he does, and the turn goes to alice.
    s = engine.from_dict(m.state)
    moved_at = back + 1_000
    if s.to_act in m.seats_of(bob.pk):
        frame = frame_for(engine.legal_actions(s)[0], m.version)
        assert act(m.pk, bob, frame, moved_at).error is None
        m.refresh_from_db()
        s = engine.from_dict(m.state)
    assert s.to_act in m.seats_of(alice.pk) and s.decision_start is not None
    assert m.last_credit["away"] == [s.to_act]
    # Alice's socket is back 25 s after her decision started: past the 10 s delay, but
    # the wave is ours: her clock did not run out meanwhile and she is charged nothing.
    assert not check_match(m.pk, None, s.decision_start + 24_000)
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    assert rejoin(m.pk, alice, s.decision_start + 25_000)
    m.refresh_from_db()
    assert engine.deadline(engine.from_dict(m.state)) == engine.deadline(s) + 25_000
    assert "away" not in m.last_credit  # both back: nothing is held any more
