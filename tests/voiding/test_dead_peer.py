"""One web process of two killed: the seats whose sockets it held are not charged their way back.

Presence on Redis (matches/clock/presence.py) says which process held which seat's
socket; the live process that finds its peer silent gives each of the peer's
seats that was to act the time since the peer's last beat — until its socket
was back on a live process, or, not back yet, until now and then until it is.
"""

from __future__ import annotations

from typing import Any

import pytest

import engine
from matches import conf
from matches.clock import liveness, presence
from matches.clock.outage import rejoin
from matches.models import Heartbeat, Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from tests.support import frame_for

pytestmark = pytest.mark.django_db


def _to_act(m: Match, *users: Any) -> tuple[Any, int, int]:
    """(the user to act, their seat, the running decision's deadline)."""
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    assert s.to_act is not None
    user = next(u for u in users if s.to_act in m.seats_of(u.pk))
    dl = engine.deadline(s)
    assert dl is not None
    return user, s.to_act, dl


def test_a_seat_to_act_whose_process_died_is_given_its_way_back(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    m = live_ranked(alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")  # its socket was on web-a
    presence.here(m.pk, [1 - seat], t - 500, process="web-b")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    # web-a is killed; web-b beats on and finds it silent 3 s later.
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]
    _, _, after = _to_act(m, alice, bob)
    assert after == deadline + 3_000  # the time since web-a's last beat, given back
    m.refresh_from_db()
    assert m.last_credit["rejoin_until"] == t + 3_000 + conf.outage_rejoin_ms()
    assert not Heartbeat.objects.get(name="web-a").active
    # Its socket comes back through web-b 1.5 s later: that time is given back too.
    assert rejoin(m.pk, mover, t + 4_500)
    assert _to_act(m, alice, bob)[2] == deadline + 4_500
    # Once only: web-b's next beats credit nothing more.
    assert liveness.beat(t + 5_000, "web-b") == []
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 2


def test_a_seat_already_back_on_a_live_process_is_given_the_time_until_its_first_action(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """Its socket connected 0.7 s after the last beat: that is given at once, and the
    seat stays held until its first action (a view sent in a wave can reach its player
    seconds after the handshake), which is given the time since as well."""
    from tests.support import frame_for

    m = live_ranked(alice, bob)
    _, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    presence.here(m.pk, [seat], t + 700, process="web-b")  # reconnected 0.7 s after
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]
    assert _to_act(m, alice, bob)[2] == deadline + 700
    m.refresh_from_db()
    assert m.last_credit["away"] == [seat] and m.last_credit["rejoin_until"] > t + 3_000
    mover, _, _ = _to_act(m, alice, bob)
    state = engine.from_dict(m.state)
    acted = act(m.pk, mover, frame_for(engine.legal_actions(state)[0], m.version), t + 5_000)
    assert acted.error is None
    rejoined = MatchEvent.objects.filter(match=m, kind="credit").order_by("pk").last()
    assert rejoined.data["rejoin"] and rejoined.data["ms"] == 5_000 - 700
    m.refresh_from_db()
    assert "rejoin_until" not in m.last_credit  # back: nothing is held any more


def test_nothing_is_given_when_the_dead_process_held_only_the_seat_not_to_act_or_retired(
    alice: Any, bob: Any, carol: Any, dave: Any, live_ranked: Any, on_redis: str
) -> None:
    m1, m2 = live_ranked(alice, bob), live_ranked(carol, dave)
    _, seat1, deadline1 = _to_act(m1, alice, bob)
    _, seat2, deadline2 = _to_act(m2, carol, dave)
    t = timing.now_ms() + 1_000
    presence.here(m1.pk, [1 - seat1], t - 500, process="web-a")  # waiting, not deciding
    presence.here(m2.pk, [seat2], t - 500, process="web-c")
    for name in ("web-a", "web-b", "web-c"):
        liveness.beat(t, name)
    liveness.retire("web-c")  # a clean restart: its sockets were closed with 1012
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == []
    assert _to_act(m1, alice, bob)[2] == deadline1
    assert _to_act(m2, carol, dave)[2] == deadline2
    assert not MatchEvent.objects.filter(kind="credit").exists()


def test_without_redis_there_is_no_peer_to_find(alice: Any, bob: Any, live_ranked: Any) -> None:
    m = live_ranked(alice, bob)
    _, _, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 1_500, "web-b") == []
    assert _to_act(m, alice, bob)[2] == deadline


def test_after_an_outage_of_the_whole_tier_the_old_processes_are_not_dead_peers_too(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """Both killed and restarted under new names: the outage is credited once, and the
    old processes' seats are not credited a second time as a dead peer's."""
    m = live_ranked(alice, bob)
    _, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")
    presence.here(m.pk, [1 - seat], t - 500, process="web-b")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 10_000, "web-a2") == [m.pk]  # the first one back
    assert liveness.beat(t + 10_300, "web-b2") == []  # the second: nothing more
    assert liveness.beat(t + 11_000, "web-a2") == []
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 1
    assert _to_act(m, alice, bob)[2] == deadline + 10_000


def test_a_seat_not_to_act_whose_process_died_is_held_for_the_decision_that_starts_while_away(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """The opponent, connected to the live process, moves while this seat reconnects:
    the decision that starts then is this seat's, and its way back is given back."""
    from tests.support import frame_for

    m = live_ranked(alice, bob)
    mover, seat, _ = _to_act(m, alice, bob)
    waiter = bob if mover is alice else alice
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [1 - seat], t - 500, process="web-a")  # the waiter's socket
    presence.here(m.pk, [seat], t - 500, process="web-b")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == []  # nothing to give: held only
    m.refresh_from_db()
    assert m.last_credit["away"] == [1 - seat]
    state = engine.from_dict(m.state)
    assert (
        act(m.pk, mover, frame_for(engine.legal_actions(state)[0], m.version), t + 4_000).error
        is None
    )
    who, to_act, deadline = _to_act(m, alice, bob)
    assert who == waiter and to_act == 1 - seat
    assert timing.rejoin_until(m, engine.from_dict(m.state)) is not None  # cannot run out
    assert rejoin(m.pk, waiter, t + 6_500, hold=True)  # back through web-b 2.5 s later
    assert _to_act(m, alice, bob)[2] == deadline + 2_500


def test_a_change_its_dead_process_may_not_have_pushed_is_pushed_again(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str, django_capture_on_commit_callbacks: Any
) -> None:
    """web-a committed the mover's move and was killed before pushing it: the seat on
    web-b, now to act, would wait on the old view (its clock running) until something
    else moved. Finding web-a dead pushes the match again, as it stands, to every audience."""
    from tests.support import capture_changes, frame_for

    m = live_ranked(alice, bob)
    mover, seat, _ = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")  # the mover's socket
    presence.here(m.pk, [1 - seat], t - 500, process="web-b")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    state = engine.from_dict(m.state)
    with capture_changes() as lost:  # committed; its push never ran (web-a was killed)
        moved = act(m.pk, mover, frame_for(engine.legal_actions(state)[0], m.version), t + 200)
    assert moved.change is not None and lost == []
    m.refresh_from_db()
    assert liveness.beat(t + 1_000, "web-b") == []
    with capture_changes() as pushed, django_capture_on_commit_callbacks(execute=True):
        assert liveness.beat(t + 3_000, "web-b") == []  # nothing to give: the mover waits
    assert [(c.match_id, c.version) for c in pushed] == [(m.pk, m.version)]
    assert set(pushed[0].audiences) == {"seat0", "seat1", "watch"}
    waiting = pushed[0].view("seat1" if seat == 0 else "seat0")
    assert waiting["match"]["version"] == m.version and waiting["my_turn"]
    # Once only: the dead peer is not found again.
    with capture_changes() as again, django_capture_on_commit_callbacks(execute=True):
        assert liveness.beat(t + 5_000, "web-b") == []
    assert again == []


def test_a_peer_whose_loop_stalled_is_not_taken_for_dead(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """Its pulse thread still says it runs (a reconnect wave stalled its loop): its
    seats are not given back the silence, which its frames' stamps already are."""
    m = live_ranked(alice, bob)
    _, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    liveness.thread_alive("web-a")
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == []
    assert Heartbeat.objects.get(name="web-a").active
    assert _to_act(m, alice, bob)[2] == deadline
    assert not MatchEvent.objects.filter(match=m, kind="credit").exists()


def test_time_given_back_once_is_not_given_again_by_a_later_credit(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """A killed peer's seat given t → t+3 s; then an outage of the tier found for
    t+1 s → t+5 s gives only what was not given yet: t+3 s → t+5 s."""
    from matches.clock.outage import credit_outage

    m = live_ranked(alice, bob)
    _, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    assert presence.credit_away(m.pk, seat, t, t + 3_000, waiting=True)
    assert _to_act(m, alice, bob)[2] == deadline + 3_000
    assert credit_outage(t + 1_000, t + 5_000) == [m.pk]
    assert _to_act(m, alice, bob)[2] == deadline + 5_000
    spans = [(e.data["to"] - e.data["ms"], e.data["to"])
             for e in MatchEvent.objects.filter(match=m, kind="credit").order_by("pk")]  # fmt: skip
    assert spans == [(t, t + 3_000), (t + 3_000, t + 5_000)]
    assert credit_outage(t + 2_000, t + 4_000) == []  # all of it given already


def test_a_process_that_stops_cleanly_holds_its_seats_until_they_are_back(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """SIGTERM: before its sockets close with 1012 the process holds every seat it held
    (config/serve.py); the seat to act is given its way back through the other process."""
    m = live_ranked(alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")
    assert presence.hold_leaving("web-a", t) == 1
    assert presence.take("web-a") == {}  # taken: its sockets' closing changes nothing
    m.refresh_from_db()
    assert m.last_credit["away"] == [seat] and m.last_credit["rejoin_until"] > t
    assert _to_act(m, alice, bob)[2] == deadline  # nothing given yet
    assert rejoin(m.pk, mover, t + 2_500, hold=True)
    assert _to_act(m, alice, bob)[2] == deadline + 2_500
    assert presence.hold_leaving("web-a", t + 3_000) == 0  # nothing held twice


def test_a_process_that_stops_cleanly_holds_all_its_seats_under_one_lock(
    alice: Any, bob: Any, carol: Any, dave: Any, live_ranked: Any, on_redis: str
) -> None:
    """At 500 matches a transaction per seat outlasted the 4 s the shutdown gives the
    holds, and the seats not yet held when their sockets closed were charged: every
    match is locked in one statement and every seat held in one transaction."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    m1, m2 = live_ranked(alice, bob), live_ranked(carol, dave)
    t = timing.now_ms() + 1_000
    presence.here(m1.pk, [0, 1], t - 500, process="web-a")  # both of m1's seats
    presence.here(m2.pk, [1], t - 500, process="web-a")
    with CaptureQueriesContext(connection) as queries:
        assert presence.hold_leaving("web-a", t) == 3
    # SQLite has no row locks (Django leaves FOR UPDATE out; its transaction locks the
    # whole database): there, the one read of every match is the lock.
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "matches_match"' in q["sql"]]
    assert len(reads) == 1, reads
    assert connection.vendor == "sqlite" or reads[0].endswith("FOR UPDATE"), reads
    # And written in one statement: an UPDATE per seat held 900 seats about a second
    # before a stopping process's sockets could close (the drill at 500 matches).
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) == 1
    m1.refresh_from_db()
    m2.refresh_from_db()
    assert m1.last_credit["away"] == [0, 1] and m2.last_credit["away"] == [1]
    assert m1.last_credit["rejoin_until"] == m2.last_credit["rejoin_until"] > t
    assert not MatchEvent.objects.filter(kind="credit").exists()  # held, nothing given yet


def test_the_way_back_after_a_dead_peer_is_given_from_where_its_credit_ended(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """The drill's match 198: the decision began before the peer's last beat, so its
    credit moved the decision's start; the rejoin then gave the same 537 ms again."""
    from loadtest.drill import given_twice
    from matches.clock.outage import credit_outage

    m = live_ranked(alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    start = engine.from_dict(m.state).decision_start
    # An outage's hold still runs (its seats back, not acted yet) when the peer dies.
    assert credit_outage(start + 1_000, start + 1_500) == [m.pk]
    t = start + 4_000
    assert presence.credit_away(m.pk, seat, t, t + 2_000, waiting=True)
    assert rejoin(m.pk, mover, t + 5_000, hold=True)
    assert _to_act(m, alice, bob)[2] == deadline + 500 + 5_000  # t → t+5 s, once
    credits = [(m.pk, e.data) for e in MatchEvent.objects.filter(match=m, kind="credit")]
    assert [d["ms"] for _, d in credits] == [500, 2_000, 3_000]
    assert given_twice(credits) == set()


def test_a_seat_whose_older_socket_closes_late_is_still_held_when_its_process_stops(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """Two sockets of one seat on one process (a second tab, or a reconnection whose old
    socket's close is handled after the new one opened): the first one closing must
    not make the process forget the seat, or the restart charges its way back."""
    m = live_ranked(alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 900, process="web-a", socket="old")
    presence.here(m.pk, [seat], t - 400, process="web-a", socket="new")
    presence.gone(m.pk, [seat], process="web-a", socket="old")  # handled late
    assert presence.hold_leaving("web-a", t) == 1
    m.refresh_from_db()
    assert m.last_credit["away"] == [seat]
    assert rejoin(m.pk, mover, t + 2_000, hold=True)
    assert _to_act(m, alice, bob)[2] == deadline + 2_000


def test_a_seat_with_a_socket_left_on_a_live_process_counts_as_back_from_then(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """The seat's other socket (another tab) on web-b connected after web-a's last
    beat: the time until then is given back at once, once."""
    m = live_ranked(alice, bob)
    _, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a", socket="tab1")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    presence.here(m.pk, [seat], t + 900, process="web-b", socket="tab2")
    presence.here(m.pk, [seat], t + 400, process="web-b", socket="tab3")
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]
    assert _to_act(m, alice, bob)[2] == deadline + 400  # the earliest socket back


def test_a_held_seat_acting_through_the_leaving_process_stays_held(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """SIGTERM: its frame arrives in the stopping process's last second and is applied;
    the socket it came on closes just after, so its next decision, which may start
    while it reconnects, is held too (the drill at 500 charged such a seat 14.7 s)."""
    from matches.play.timing import rejoin_until
    from tests.support import frame_for

    m = live_ranked(alice, bob)
    mover, seat, _ = _to_act(m, alice, bob)
    other = bob if mover is alice else alice
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a", socket="s1")
    assert presence.hold_leaving("web-a", t) == 1
    m.refresh_from_db()

    def move(user: Any, at: int, *, leaving: bool = False) -> None:
        m.refresh_from_db()
        action = engine.legal_actions(engine.from_dict(m.state))[0]
        act(m.pk, user, frame_for(action, m.version), at, leaving=leaving)

    move(mover, t + 300, leaving=True)  # through web-a, whose socket closes next
    m.refresh_from_db()
    assert seat in m.last_credit["away"]
    # The opponent, on the other process, moves while the seat reconnects.
    while engine.from_dict(m.state).to_act != seat:
        move(other, t + 1_000)
        m.refresh_from_db()
    state = engine.from_dict(m.state)
    assert rejoin_until(m, state) is not None  # its clock cannot run out meanwhile
    deadline = engine.deadline(state)
    assert deadline is not None
    # Back 20 s later: the way back is given, as for a seat that never acted.
    assert rejoin(m.pk, mover, t + 21_000, hold=True)
    m.refresh_from_db()
    assert engine.deadline(engine.from_dict(m.state)) == deadline + 20_000


def _seat_one_to_act(m: Match, *users: Any) -> None:
    """Moves are played until seat 1 is to act (its decision running)."""
    for _ in range(20):
        user, seat, _ = _to_act(m, *users)
        if seat == 1:
            return
        s = engine.from_dict(m.state)
        frame = frame_for(engine.legal_actions(s)[0], m.version)
        act(m.pk, user, frame, timing.now_ms())
    raise AssertionError("seat 1 never came to act")


def test_both_seats_on_the_dead_process_the_seat_to_act_gets_all_its_way_back(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """Seat 0 (not to act) was credited first and held from the moment the death was
    found: seat 1's time from the last beat to then was given to nobody."""
    m = live_ranked(alice, bob)
    _seat_one_to_act(m, alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [0, 1], t - 500, process="web-a")  # both sockets on web-a
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 1_000, "web-b") == liveness.beat(t + 2_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]  # web-a found dead
    assert _to_act(m, alice, bob)[2] == deadline + 3_000
    assert rejoin(m.pk, mover, t + 4_000, hold=True)
    assert _to_act(m, alice, bob)[2] == deadline + 4_000


def test_the_opponents_process_dying_later_takes_nothing_from_the_seat_to_act(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """The drill's match 123 at 500 matches: the seat to act was given its way back to
    the death of its process (t+3 s) and held; its opponent's process died 2 s later,
    and that hold, giving nothing, moved "given back up to" past the seat's own way
    back: its rejoin then started at t+5 s, and it was charged the 2 s between."""
    m = live_ranked(alice, bob)
    mover, seat, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    presence.here(m.pk, [seat], t - 500, process="web-a")
    presence.here(m.pk, [1 - seat], t - 500, process="web-b")
    for p in ("web-a", "web-b", "web-c"):
        liveness.beat(t, p)
    for at in (1_000, 2_000):
        assert liveness.beat(t + at, "web-b") == liveness.beat(t + at, "web-c") == []
    assert liveness.beat(t + 3_000, "web-c") == [m.pk]  # web-a found dead
    assert _to_act(m, alice, bob)[2] == deadline + 3_000
    assert liveness.beat(t + 4_000, "web-c") == []
    assert liveness.beat(t + 5_000, "web-c") == []  # web-b found dead: its seat only held
    m.refresh_from_db()
    assert m.last_credit["away"] == [0, 1]
    assert rejoin(m.pk, mover, t + 6_000, hold=True)
    assert _to_act(m, alice, bob)[2] == deadline + 6_000  # all of t → t+6 s, once
