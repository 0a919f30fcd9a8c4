"""Service faults (RULES §8): nobody pays for our outage, and no match is voided without cause.

The web tier's heartbeats (``liveness.beat``) are written at explicit times: an
outage is a silence of every web process for more than 2 s. Its time is given
back to each waiting or live match; only an outage of more than three minutes
voids a live match. Staff can void a match from the admin.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

import engine
from matches.clock import liveness, outage, sweeper, voiding
from matches.clock.deadlines import GRACE_MS, check_match
from matches.clock.outage import OUTAGE_VOID_AFTER_MS, rejoin
from matches.clock.voiding import VOID_OUTAGE
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Heartbeat, Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError

pytestmark = pytest.mark.django_db

T0 = 1_900_000_000_000  # an epoch ms far from the clock fixture's, for explicit beats
# The way back after an outage that froze one match (it grows with the wave's size).
ALLOWANCE_1 = settings.OUTAGE_REJOIN_MS + settings.OUTAGE_REJOIN_PER_MATCH_MS


@pytest.fixture
def commits(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """``with commits():`` runs what waits for the commit (the pushes)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _state(m: Match) -> engine.MatchState:
    m.refresh_from_db()
    assert m.state is not None
    return engine.from_dict(m.state)


def _ratings_untouched(*users: Any) -> None:
    from ratings.models import PlayerRating, RatingChange
    from ratings.services import rating_of

    for u in users:
        assert rating_of(u).value == 1500 and rating_of(u).rated_matches == 0
        assert not PlayerRating.objects.filter(user=u).exists()
        assert not RatingChange.objects.filter(player=u).exists()


def _running(m: Match) -> tuple[int, int]:
    """The running decision's deadline and the main time of the player to act."""
    s = _state(m)
    dl = engine.deadline(s)
    assert dl is not None and s.to_act is not None and s.main is not None
    return dl, s.main[s.to_act]


# --- the web tier's outages are credited ---------------------------------------------------


def test_an_outage_of_the_whole_web_tier_is_given_back_to_the_player_to_act(
    alice: Any, bob: Any, live_ranked: Any, commits: Any, pushes: list[Any]
) -> None:
    m = live_ranked(alice, bob)
    deadline, main = _running(m)
    s = _state(m)
    assert s.decision_start is not None
    start = s.decision_start + 3_000  # 3 s into the decision, the last beat
    liveness.beat(start, "web-a")
    with commits():
        # 13.1 s later a process beats again (a restart of the only web process).
        credited = liveness.beat(start + 13_100, "web-b")
    assert credited == [m.pk]
    new_deadline, new_main = _running(m)
    assert new_deadline == deadline + 13_100
    assert new_main == main  # main time untouched: the 10 s delay is given back as well
    s2 = _state(m)
    clocks_then = engine.clocks_at(s, start)
    assert engine.clocks_at(s2, start + 13_100) == clocks_then
    event = MatchEvent.objects.filter(match=m, kind="credit").get()
    assert event.data["ms"] == 13_100 and event.data["player"] == s.to_act
    # Both pages are told: the pushed frames say how much was given back, and to whom.
    for seat in ("seat0", "seat1"):
        assert f'"credit":{{"ms":13100,"seat":{s.to_act},' in pushes[-1].frames[seat]
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE and m.wake_at_ms == new_deadline
    assert pushes[-1].match_id == m.pk and pushes[-1].version == m.version
    _ratings_untouched(alice, bob)


def test_a_silence_of_2_s_or_less_is_no_outage(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    before = _running(m)
    liveness.beat(T0, "web-a")
    with commits():
        assert liveness.beat(T0 + 2_000, "web-a") == []
    assert _running(m) == before
    assert not MatchEvent.objects.filter(match=m, kind="credit").exists()


def test_with_two_web_processes_restarting_one_is_no_outage(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    before = _running(m)
    liveness.beat(T0, "web-a")
    liveness.beat(T0, "web-b")
    liveness.retire("web-a")  # a graceful restart of web-a...
    for t in range(1_000, 15_000, 1_000):
        assert liveness.beat(T0 + t, "web-b") == []  # ...while web-b keeps beating
    with commits():
        assert liveness.beat(T0 + 15_000, "web-a") == []  # web-a is back
    assert _running(m) == before


def test_start_and_continue_windows_move_on_by_the_outage(
    alice: Any, bob: Any, commits: Any
) -> None:
    waiting = accept_invite(create_invite(alice).code, bob)
    window = waiting.ready_deadline_ms
    credit_from = window - 5_000
    liveness.beat(credit_from, "web-a")
    with commits():
        assert liveness.beat(credit_from + 20_000, "web-a") == [waiting.pk]
    waiting.refresh_from_db()
    assert waiting.status == Match.Status.WAITING
    assert waiting.ready_deadline_ms == window + 20_000 == waiting.wake_at_ms


def test_an_outage_of_more_than_three_minutes_voids_live_matches_without_rating(
    alice: Any, bob: Any, live_ranked: Any, commits: Any, pushes: list[Any]
) -> None:
    m = live_ranked(alice, bob)
    liveness.beat(T0, "web-a")
    with commits():
        assert liveness.beat(T0 + OUTAGE_VOID_AFTER_MS + 1, "web-a") == [m.pk]
    m.refresh_from_db()
    assert m.status == Match.Status.VOIDED and m.end_reason == "void"
    assert m.winner_seat is None and m.void_reason == VOID_OUTAGE
    assert m.wake_at_ms is None
    assert pushes[-1].match_id == m.pk and '"end":"void"' in pushes[-1].frames["seat0"]
    _ratings_untouched(alice, bob)


def test_a_workers_silence_voids_and_credits_nothing(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    before = _running(m)
    liveness.worker_beat("worker-a")
    liveness.beat(T0, "web-a")
    with commits():
        for t in range(1_000, 20_000, 1_000):  # the web tier beats on; no worker for 20 s
            liveness.beat(T0 + t, "web-a")
    assert _running(m) == before
    assert Heartbeat.objects.filter(kind="worker").count() == 1


def test_a_web_process_shutting_down_proves_no_more_life_from_that_moment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proved: list[str] = []
    monkeypatch.setattr(liveness, "stopped_at_ms", None)
    monkeypatch.setattr(liveness, "beaten", True)
    monkeypatch.setattr(liveness, "beat", lambda tick, name, **kw: proved.append("beat"))
    monkeypatch.setattr(liveness, "pulse", lambda tick, name: proved.append("pulse"))
    pulse = liveness.PulseThread("web-a")
    monkeypatch.setattr(liveness, "loop_tick_ms", timing.now_ms())
    pulse.once()
    assert proved == ["beat", "pulse"]
    # SIGTERM: no longer listening, every socket closed with 1012. Draining takes a
    # while, but no frame can arrive meanwhile: no more proof, no deadline enforced.
    liveness.stop_receiving(timing.now_ms())
    monkeypatch.setattr(liveness, "loop_tick_ms", timing.now_ms())
    pulse.once()
    assert proved == ["beat", "pulse"]
    assert liveness.tier_alive_ms() == liveness.stopped_at_ms  # the embedded sweeper's gate


def test_when_the_whole_tier_shut_down_the_outage_counts_from_when_it_stopped_receiving(
    alice: Any, bob: Any, live_ranked: Any, commits: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = live_ranked(alice, bob)
    stopped = timing.now_ms() - 5_000  # SIGTERM 5 s ago; the drain just ended
    liveness.beat(stopped - 300, "web-a")
    monkeypatch.setattr(liveness, "stopped_at_ms", None)
    liveness.stop_receiving(stopped)
    liveness.retire("web-a")
    with commits():
        assert liveness.beat(stopped + 8_000, "web-b") == [m.pk]  # started again
    event = MatchEvent.objects.filter(match=m, kind="credit").get()
    assert (event.data["from"], event.data["to"]) == (stopped, stopped + 8_000)


@pytest.mark.django_db(transaction=True)
def test_two_web_processes_ending_an_outage_together_credit_it_once(
    require_postgres: None, alice: Any, bob: Any, live_ranked: Any
) -> None:
    m = live_ranked(alice, bob)
    deadline, _main = _running(m)
    liveness.beat(T0, "web-a")
    liveness.beat(T0, "web-b")
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def back(name: str) -> None:
        try:
            barrier.wait()
            liveness.beat(T0 + 10_000, name)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=back, args=(n,)) for n in ("web-a", "web-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _running(m)[0] == deadline + 10_000
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_restarted_web_processes_ending_an_outage_together_credit_it_once(
    require_postgres: None, alice: Any, bob: Any, live_ranked: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restarted processes beat under new names (new pids): the first inserts its row
    while the second waits for the old rows' locks, and must then see that beat.
    (`make drill` found each match credited twice after both web processes restarted.)"""
    m = live_ranked(alice, bob)
    deadline, _main = _running(m)
    liveness.beat(T0, "web-old-a")
    liveness.beat(T0, "web-old-b")
    credit = outage.credit_outage
    first = threading.Lock()

    def credit_once_the_other_waits(start_ms: int, end_ms: int) -> list[int]:
        # The first process to credit holds the old rows' locks: let the other one
        # start its beat and queue behind them before this one commits.
        if first.acquire(blocking=False):
            others.release()
            ok = _until(lambda: _backends_waiting_for_a_lock() >= 1)
            assert ok, "the other process never waited for the web rows' locks"
        return credit(start_ms, end_ms)

    monkeypatch.setattr(outage, "credit_outage", credit_once_the_other_waits)
    others = threading.Semaphore(0)
    errors: list[BaseException] = []

    def back(name: str, after_first: bool) -> None:
        try:
            if after_first:
                assert others.acquire(timeout=10)
            liveness.beat(T0 + 10_000, name)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=back, args=("web-new-c", False)),
        threading.Thread(target=back, args=("web-new-d", True)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 1
    assert _running(m)[0] == deadline + 10_000


def _backends_waiting_for_a_lock() -> int:
    from django.db import connections

    with connections["default"].cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(cur.fetchone()[0])


def _until(ok: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not ok():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# --- the sweeper waits for proof that the web tier was up ----------------------------------


def test_the_sweeper_enforces_a_deadline_only_once_the_web_tier_proved_life_after_it(
    alice: Any, bob: Any, live_ranked: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = live_ranked(alice, bob)
    deadline, _ = _running(m)
    proof: list[int | None] = [deadline - 500]  # the last pulse came before the deadline
    monkeypatch.setattr(liveness, "tier_alive_ms", lambda: proof[0])
    monkeypatch.setattr(timing, "now_ms", lambda: deadline + 5_000)
    sweeper.sweep_once()
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE  # held: nobody could have sent a frame
    proof[0] = None  # Redis does not answer: no proof at all
    sweeper.sweep_once()
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    proof[0] = deadline + GRACE_MS  # the tier was up after the deadline
    sweeper.sweep_once()
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.end_reason == "time"


# --- staff ---------------------------------------------------------------------------------


def test_staff_void_a_match_in_the_admin(
    alice: Any, bob: Any, live_ranked: Any, client: Any, commits: Any, pushes: list[Any]
) -> None:
    from django.contrib.auth import get_user_model

    m = live_ranked(alice, bob)
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(staff)
    with commits():
        response = client.post(
            "/admin/matches/match/",
            {"action": "void_after_fault", "_selected_action": [str(m.pk)]},
            follow=True,
        )
    assert response.status_code == 200
    m.refresh_from_db()
    assert m.status == Match.Status.VOIDED and m.void_reason == voiding.VOID_STAFF
    assert MatchEvent.objects.filter(match=m, kind="voided").count() == 1
    assert pushes[-1].match_id == m.pk
    _ratings_untouched(alice, bob)


def test_only_live_matches_can_be_voided(alice: Any, bob: Any, live_ranked: Any) -> None:
    m = live_ranked(alice, bob)
    act(m.pk, alice, {"op": "resign", "version": m.version}, timing.now_ms())
    waiting = accept_invite(create_invite(alice).code, bob)
    assert voiding.void([m.pk, waiting.pk]) == []
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED


def test_a_move_after_the_void_is_refused(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    with commits():
        assert voiding.void([m.pk]) == [m.pk]
    m.refresh_from_db()
    with pytest.raises(ServiceError) as e:
        act(m.pk, alice, {"op": "resign", "version": m.version}, timing.now_ms())
    assert e.value.code == "match_over"


def test_a_web_process_proves_nothing_while_the_proxy_in_front_of_it_is_down(
    settings: Any,
) -> None:
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        settings.LIVENESS_PROBE = f"127.0.0.1:{listening.getsockname()[1]}"
        assert liveness.proxy_answers()
    # The proxy is gone: the port no longer accepts.
    assert not liveness.proxy_answers()
    settings.LIVENESS_PROBE = ""
    assert liveness.proxy_answers()  # no proxy: nothing to check


# --- the seat whose decision the outage cut: the time until its socket is back --------------


def _cut_at_the_end(m: Match, left_ms: int) -> tuple[int, int]:
    """An outage ending with ``left_ms`` on the running decision's clock: (back, seat to act)."""
    deadline, _ = _running(m)
    start = deadline - left_ms  # the last beat before the outage
    liveness.beat(start, "web-a")
    back = start + 13_100
    assert liveness.beat(back, "web-b") == [m.pk]
    assert _running(m)[0] == back + left_ms
    to_act = _state(m).to_act
    assert to_act is not None
    return back, to_act


def _users(m: Match, *users: Any) -> tuple[Any, Any]:
    """(the user to act, the other one)."""
    s = _state(m)
    mover = next(u for u in users if s.to_act in m.seats_of(u.pk))
    return mover, next(u for u in users if u is not mover)


def test_the_seat_to_act_is_given_back_the_time_until_its_socket_is_back(
    alice: Any, bob: Any, live_ranked: Any, commits: Any, pushes: list[Any]
) -> None:
    m = live_ranked(alice, bob)
    back, seat = _cut_at_the_end(m, 60_000)
    mover, other = _users(m, alice, bob)
    deadline, _ = _running(m)
    assert not rejoin(m.pk, other, back + 1_000)  # not the one whose time ran
    with commits():
        assert rejoin(m.pk, mover, back + 1_800)  # its page reconnected 1.8 s later
    assert _running(m)[0] == deadline + 1_800
    event = MatchEvent.objects.filter(match=m, kind="credit").order_by("pk").last()
    assert event is not None and event.data["ms"] == 1_800 and event.data["rejoin"]
    m.refresh_from_db()
    # Given back through its return: a later credit starts no earlier.
    assert m.last_credit == {
        "ms": 13_100 + 1_800,
        "seat": seat,
        "to": back,
        "through": back + 1_800,
    }
    assert event.data["from"] == back and event.data["to"] == back + 1_800
    for audience in ("seat0", "seat1"):  # both pages show the whole time given back
        assert f'"credit":{{"ms":14900,"seat":{seat},' in pushes[-1].frames[audience]
    # Once is all: a second reconnection (a reload) gives nothing more.
    assert not rejoin(m.pk, mover, back + 4_000)
    assert _running(m)[0] == deadline + 1_800


def test_the_time_given_back_for_coming_back_is_capped(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    back, _ = _cut_at_the_end(m, 60_000)
    mover, _ = _users(m, alice, bob)
    deadline, _ = _running(m)
    with commits():
        assert rejoin(m.pk, mover, back + 60_000)  # a minute away: the allowance only
    assert _running(m)[0] == deadline + ALLOWANCE_1


def test_a_clock_cannot_run_out_before_its_seat_could_come_back(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    """One second left when the server came back, and the page back 3 s later: no loss."""
    m = live_ranked(alice, bob)
    back, _ = _cut_at_the_end(m, 1_000)
    mover, other = _users(m, alice, bob)
    m.refresh_from_db()
    assert m.wake_at_ms == back + ALLOWANCE_1  # the sweeper waits for it
    with commits():
        # The opponent's "their clock shows zero" and the sweeper, meanwhile: nothing.
        act(m.pk, other, {"op": "flag", "version": m.version}, back + 2_000)
        assert not check_match(m.pk, None, back + 2_500)
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    with commits():
        assert rejoin(m.pk, mover, back + 3_000)
    assert _running(m)[0] == back + 1_000 + 3_000
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE and m.wake_at_ms == back + 4_000


def test_a_seat_that_never_comes_back_loses_on_time_once_the_allowance_passed(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    back, seat = _cut_at_the_end(m, 1_000)
    _, other = _users(m, alice, bob)
    until = back + ALLOWANCE_1
    with commits():
        assert not check_match(m.pk, None, until - 1)
        assert check_match(m.pk, None, until)
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.end_reason == "time"
    assert m.winner_seat == 1 - seat
    timeout = MatchEvent.objects.filter(match=m, kind="timeout").get()
    assert timeout.data["player"] == seat


def test_the_seats_own_frame_proves_it_is_back(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    """A frame from the seat to act (by socket or the HTTP API) counts as its return."""
    m = live_ranked(alice, bob)
    back, seat = _cut_at_the_end(m, 1_000)
    mover, _ = _users(m, alice, bob)
    with commits():
        out = act(m.pk, mover, {"op": "resign", "version": m.version}, back + 2_500)
    assert out.error is None
    m.refresh_from_db()
    assert m.end_reason == "resign" and m.winner_seat == 1 - seat
    assert MatchEvent.objects.filter(match=m, kind="credit").count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_outage_credit_locks_every_open_match_before_crediting_the_first(
    require_postgres: None, alice: Any, bob: Any, carol: Any, dave: Any, live_ranked: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A seat back early cannot act on a match the credit has not reached yet: its frame
    waits for the credit's commit (stamped on arrival, so the wait is not its player's)."""
    from django.db import DatabaseError, transaction

    first, last = live_ranked(alice, bob), live_ranked(carol, dave)
    seen: list[str] = []
    credit_one = outage._credit_one

    def try_last() -> None:
        try:
            with transaction.atomic():
                Match.objects.select_for_update(nowait=True).get(pk=last.pk)
            seen.append("free")
        except DatabaseError:
            seen.append("locked")
        finally:
            connection.close()

    def spying(m: Match, *args: Any) -> bool:
        if m.pk == first.pk:  # the loop's first match: is the last one locked already?
            t = threading.Thread(target=try_last)
            t.start()
            t.join()
        return credit_one(m, *args)

    monkeypatch.setattr(outage, "_credit_one", spying)
    now = timing.now_ms()
    assert outage.credit_outage(now - 5_000, now) == [first.pk, last.pk]
    assert seen == ["locked"]
