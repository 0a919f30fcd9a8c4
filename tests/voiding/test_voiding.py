"""Voiding after a service fault (RULES §8): gaps in the heartbeats void live matches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import engine
from matches import services, tasks, voiding
from matches.models import Heartbeat, Match, MatchEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def commits(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """``with commits():`` runs what waits for the commit (the void, the pushes)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _assert_voided(m: Match, reason: str = voiding.VOID_OUTAGE) -> None:
    m.refresh_from_db()
    assert m.status == Match.Status.VOIDED
    assert m.end_reason == "void" and m.winner_seat is None
    assert m.void_reason == reason
    assert MatchEvent.objects.filter(match=m, kind="voided").count() == 1


def _ratings_untouched(*users: Any) -> None:
    from ratings.models import PlayerRating, RatingChange
    from ratings.services import rating_of

    for u in users:
        assert rating_of(u).value == 1500 and rating_of(u).rated_matches == 0
        assert not PlayerRating.objects.filter(user=u).exists()
        assert not RatingChange.objects.filter(player=u).exists()


def test_a_web_process_silent_for_more_than_5_s_while_a_clock_ran_voids_the_match(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any, pushes: list[int]
) -> None:
    m = live_ranked(alice, bob)
    assert engine.deadline(engine.from_dict(m.state)) is not None  # the clock runs
    voiding.beat("web", "web-1")
    clock.shift(5.5)
    with commits():
        assert voiding.scan() == [m.pk]
    _assert_voided(m)
    _ratings_untouched(alice, bob)
    assert pushes[-1] == m.pk
    for user in (alice, bob):
        _, view = services.current_view(m.pk, user)
        assert view["match"]["status"] == "voided"
        assert view["match"]["result"] == {
            "winner": None,
            "end": "void",
            "reason": voiding.VOID_OUTAGE,
        }
        assert view["match"]["void_reason"] == voiding.VOID_OUTAGE


def test_a_silence_of_5_s_or_less_is_no_fault(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    voiding.beat("web", "web-1")
    clock.shift(5)
    with commits():
        assert voiding.scan() == []
        assert voiding.beat("web", "web-1") == []
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE and not m.flagged_for_void


def test_a_process_that_resumes_after_a_long_pause_reports_its_own_gap(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    voiding.beat("web", "web-1")
    clock.shift(8)  # the loop was blocked, and nobody else ran a scan
    with commits():
        assert voiding.beat("web", "web-1") == [m.pk]
    _assert_voided(m)


def test_an_outage_of_the_whole_service_is_found_by_the_first_new_process(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    voiding.beat("web", "web-1")
    voiding.beat("worker", "worker-1")
    clock.shift(90)  # everything was down; new processes come up with new names
    with commits():
        assert voiding.beat("web", "web-2") == [m.pk]
    _assert_voided(m)


def test_a_dead_process_is_charged_once_and_not_held_against_later_matches(
    alice: Any, bob: Any, carol: Any, dave: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    first = live_ranked(alice, bob)
    voiding.beat("web", "web-1")  # web-1 dies after this beat
    for _ in range(6):
        clock.shift(1)
        voiding.beat("web", "web-2")
    with commits():
        assert voiding.scan() == [first.pk]
    _assert_voided(first)
    later = live_ranked(carol, dave)
    for _ in range(20):
        clock.shift(1)
        voiding.beat("web", "web-2")
        with commits():
            assert voiding.scan() == []
    later.refresh_from_db()
    assert later.status == Match.Status.LIVE
    assert not Heartbeat.objects.get(name="web-1").active


def _web_beats_for(clock: Any, seconds: int) -> None:
    """web-1 beats every second for ``seconds`` seconds (it is healthy throughout)."""
    for _ in range(seconds):
        clock.shift(1)
        voiding.beat("web", "web-1")


def test_the_workers_count_as_one_pool(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    voiding.beat("web", "web-1")
    voiding.beat("worker", "worker-a")
    _web_beats_for(clock, 3)
    voiding.beat("worker", "worker-b")  # the beat tasks went to worker-b lately
    _web_beats_for(clock, 4)
    with commits():
        assert voiding.scan() == []  # worker-a rests 7 s, but the pool beat 4 s ago
    assert not Heartbeat.objects.get(name="worker-a").active
    _web_beats_for(clock, 2)
    with commits():
        assert voiding.scan() == [m.pk]  # no worker beat for 6 s
    _assert_voided(m)


def test_a_match_whose_clock_stood_still_through_the_gap_is_not_voided(
    alice: Any, clock: Any, commits: Any
) -> None:
    # Same device, just started: the clock waits for the first reveal (RULES §7).
    m = services.create_same_device(alice, "Guest")
    services.act(m.pk, alice, {"op": "start", "version": m.version}, services.now_ms())
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    assert engine.deadline(engine.from_dict(m.state)) is None
    clock.shift(1)
    voiding.beat("web", "web-1")  # the last beat before the outage
    clock.shift(30)
    with commits():
        assert voiding.scan() == []
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE


def test_a_match_not_yet_started_is_not_voided(
    alice: Any, bob: Any, clock: Any, commits: Any
) -> None:
    inv = services.create_invite(alice)
    m = services.accept_invite(inv.code, bob)
    voiding.beat("web", "web-1")
    clock.shift(30)
    with commits():
        assert voiding.scan() == []
    m.refresh_from_db()
    assert m.status == Match.Status.WAITING


def test_a_process_that_stopped_cleanly_is_no_fault_while_others_beat(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    voiding.beat("web", "web-1")
    voiding.beat("web", "web-2")
    voiding.retire("web-1")
    for _ in range(10):
        clock.shift(1)
        voiding.beat("web", "web-2")
    with commits():
        assert voiding.scan() == []
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE


def test_only_live_matches_are_flagged(
    alice: Any, bob: Any, live_ranked: Any, clock: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    services.act(m.pk, alice, {"op": "resign", "version": m.version}, services.now_ms())
    with commits():
        assert voiding.flag([m.pk]) == []
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and not m.flagged_for_void


def test_with_celery_the_void_is_queued_as_a_task(
    alice: Any, bob: Any, live_ranked: Any, settings: Any, monkeypatch: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    queued: list[bool] = []
    monkeypatch.setattr(tasks.void_flagged_matches, "delay", lambda: queued.append(True))
    settings.MATCH_TIMERS = "celery"
    with commits():
        assert voiding.flag([m.pk], voiding.VOID_STAFF) == [m.pk]
    assert queued == [True]
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE and m.flagged_for_void
    with commits():
        assert tasks.void_flagged_matches() == 1
    _assert_voided(m, voiding.VOID_STAFF)
    with commits():
        assert tasks.void_flagged_matches() == 0  # idempotent


def test_staff_flag_a_match_for_voiding_in_the_admin(
    alice: Any, bob: Any, live_ranked: Any, client: Any, commits: Any, pushes: list[int]
) -> None:
    from django.contrib.auth import get_user_model

    m = live_ranked(alice, bob)
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(staff)
    with commits():
        response = client.post(
            "/admin/matches/match/",
            {"action": "flag_for_voiding", "_selected_action": [str(m.pk)]},
            follow=True,
        )
    assert response.status_code == 200
    _assert_voided(m, voiding.VOID_STAFF)
    assert pushes[-1] == m.pk
    _ratings_untouched(alice, bob)


def test_a_move_after_the_void_is_refused(
    alice: Any, bob: Any, live_ranked: Any, commits: Any
) -> None:
    m = live_ranked(alice, bob)
    with commits():
        voiding.flag([m.pk])
    m.refresh_from_db()
    with pytest.raises(services.ServiceError) as e:
        services.act(m.pk, alice, {"op": "resign", "version": m.version}, services.now_ms())
    assert e.value.code == "match_over"
