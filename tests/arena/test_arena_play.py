"""Arenas in play: pairing through matches.play.seating, results, berserk, pauses and the edges."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

import engine
from matches.clock import deadlines, voiding
from matches.models import Match
from matches.play import timing
from tests.arena.conftest import current, entry, make_arena, players, win
from tests.support import Tables, make_user
from tournaments import push, services
from tournaments.models import Arena, Entry, Pairing

pytestmark = pytest.mark.django_db(transaction=True)


def join_all(arena: Arena, users: list[Any]) -> None:
    for u in users:
        services.join(arena.pk, u)


def test_waiting_players_are_paired_into_real_matches(arena: Arena) -> None:
    a, b = players(2)
    join_all(arena, [a, b])
    made = services.pair_arena(arena.pk).paired
    assert len(made) == 1
    m = Match.objects.get(pk=made[0])
    # A rated arena makes ranked matches, waiting for 開始 like any other.
    assert m.kind == Match.Kind.RANKED and m.status == Match.Status.WAITING
    assert {m.player0_id, m.player1_id} == {a.pk, b.pk}
    assert current(arena, a) == m and current(arena, b) == m
    # Busy players are not paired again.
    assert services.pair_arena(arena.pk).paired == []


def test_a_saturated_tier_pairs_nobody_until_it_has_room(arena: Arena, monkeypatch: Any) -> None:
    from matches.play import admission

    a, b = players(2)
    join_all(arena, [a, b])
    refused = admission.refusals["arena_pairing"]
    monkeypatch.setattr(admission, "tier_saturated", lambda: True)
    assert services.pairing_pass() == {}  # new matches wait at the door, like the queue's
    assert not Match.objects.exists() and current(arena, a) is None
    assert admission.refusals["arena_pairing"] == refused + 1
    monkeypatch.setattr(admission, "tier_saturated", lambda: False)
    assert len(services.pairing_pass()[arena.pk].paired) == 1


def test_a_win_counts_two_points_and_streaks_count_double(arena: Arena, tables: Tables) -> None:
    star, *others = players(4)
    join_all(arena, [star, *others])
    expected = [2, 4, 8]  # 2, 2, then on fire: 4
    for want in expected:
        services.pair_arena(arena.pk)
        m = current(arena, star)
        assert m is not None
        opp = m.player1 if m.player0_id == star.pk else m.player0
        win(tables, m, star)
        # The result reached the arena with the match's commit.
        e = entry(arena, star)
        assert e.points == want and e.current_match_id is None
        assert entry(arena, opp).streak == 0
        # Everyone else finishes their match too, so all wait again.
        for u in others:
            mm = current(arena, u)
            if mm is not None:
                win(tables, mm, mm.player0)
    e = entry(arena, star)
    assert (e.points, e.streak, e.played, e.wins) == (8, 3, 3, 3)


def test_berserk_halves_the_main_time_at_start_and_wins_a_point_more(
    arena: Arena, tables: Tables
) -> None:
    a, b = players(2)
    join_all(arena, [a, b])
    (mid,) = services.pair_arena(arena.pk).paired
    m = Match.objects.get(pk=mid)
    services.berserk(mid, a)
    m = tables.start(m)
    state = engine.from_dict(m.state)
    seat = m.seats_of(a.pk)[0]
    assert engine.clocks_at(state, timing.now_ms())[seat] == 60_000
    assert state.main[1 - seat] == 120_000
    # Too late once the match runs: refused, nothing changes.
    with pytest.raises(services.ArenaError) as e:
        services.berserk(mid, b)
    assert e.value.code == "too_late"
    assert Pairing.objects.get(match_id=mid).berserk[1 - seat] is False
    tables.resign(m, b)
    assert entry(arena, a).points == 3 and entry(arena, b).points == 0


def test_berserk_is_only_for_the_players_of_an_arena_match(arena: Arena, tables: Tables) -> None:
    a, b, c = players(3)
    m = tables.ranked(a, b)  # not an arena match
    with pytest.raises(services.ArenaError) as e:
        services.berserk(m.pk, a)
    assert e.value.code == "not_found"
    join_all(arena, [a, c])
    # a is busy in the other match (the one busy check, matches.play.seating): c has nobody.
    assert services.pair_arena(arena.pk).paired == []
    assert current(arena, a) is None


def test_the_same_opponent_again_only_when_nobody_else_waits(arena: Arena, tables: Tables) -> None:
    a, b, c = players(3)
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    win(tables, current(arena, a), a)
    # Only a and b wait: they meet again.
    services.pair_arena(arena.pk)
    m = current(arena, a)
    assert m is not None and current(arena, b) == m
    win(tables, m, b)
    # Now c waits too: a and b are not paired with each other.
    services.join(arena.pk, c)
    services.pair_arena(arena.pk)
    ma = current(arena, a)
    assert ma is not None and c.pk in (ma.player0_id, ma.player1_id)
    assert current(arena, b) is None


def test_after_a_match_players_rest_before_the_next_pairing(
    arena: Arena, tables: Tables, settings: Any, clock: Any
) -> None:
    settings.ARENA_REST_S = 6
    a, b = players(2)
    arena.starts_at = timezone.now() - timedelta(minutes=1)
    arena.save()
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    win(tables, current(arena, a), a)
    clock.shift(5)
    assert services.pair_arena(arena.pk).paired == []  # still resting
    clock.shift(2)
    assert len(services.pair_arena(arena.pk).paired) == 1


def test_an_absent_player_is_paused_never_paired(arena: Arena, settings: Any) -> None:
    a, b, c = players(3)
    join_all(arena, [a, b, c])
    Entry.objects.filter(user=c).update(last_seen=timezone.now() - timedelta(seconds=60))
    result = services.pair_arena(arena.pk)
    assert result.paused == [c.pk]
    assert entry(arena, c).state == Entry.State.PAUSED and current(arena, c) is None
    assert current(arena, a) is not None
    # Back and joined again: active, paired at the next pass with the next free player.
    d = make_user("d")
    join_all(arena, [c, d])
    services.pair_arena(arena.pk)
    assert current(arena, c) is not None


def test_pause_and_withdraw_stop_pairings_and_join_resumes(arena: Arena) -> None:
    a, b = players(2)
    join_all(arena, [a, b])
    services.pause(arena.pk, a)
    assert services.pair_arena(arena.pk).paired == []
    services.join(arena.pk, a)
    assert len(services.pair_arena(arena.pk).paired) == 1


def test_withdrawing_mid_match_still_counts_that_match(arena: Arena, tables: Tables) -> None:
    a, b, c = players(3)
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    m = current(arena, a)
    services.withdraw(arena.pk, a)
    win(tables, m, a)
    e = entry(arena, a)
    assert e.state == Entry.State.WITHDRAWN and e.points == 2
    services.join(arena.pk, c)
    services.pair_arena(arena.pk)
    assert current(arena, a) is None  # withdrawn: never paired again
    assert current(arena, b) is not None and current(arena, c) is not None


def test_a_void_counts_nothing(arena: Arena, tables: Tables) -> None:
    a, b = players(2)
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    services.join(arena.pk, a)  # joining again while playing changes nothing
    m = tables.start(current(arena, a))
    assert voiding.void_match(m.pk)
    for u in (a, b):
        e = entry(arena, u)
        assert (e.points, e.played, e.streak, e.current_match_id) == (0, 0, 0, None)
    p = Pairing.objects.get(match=m)
    assert p.settled and not p.counted


def test_an_abort_pauses_the_player_who_did_not_press_start(
    arena: Arena, tables: Tables, clock: Any
) -> None:
    a, b = players(2)
    arena.starts_at = timezone.now() - timedelta(minutes=1)
    arena.save()
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    m = current(arena, a)
    tables.act(m, a, "start")
    clock.shift(61)  # the start window closes
    deadlines.check_match(m.pk)
    assert Match.objects.get(pk=m.pk).status == Match.Status.ABORTED
    assert entry(arena, b).state == Entry.State.PAUSED
    assert entry(arena, a).state == Entry.State.ACTIVE and entry(arena, a).played == 0


def test_no_pairing_starts_in_the_last_minute(transactional_db: Any) -> None:
    arena = make_arena(started_ago_s=59 * 60 + 5)  # 55 s left
    a, b = players(2)
    join_all(arena, [a, b])
    assert services.pair_arena(arena.pk).paired == []


def test_a_match_still_running_at_the_end_is_not_counted(
    transactional_db: Any, tables: Tables, clock: Any
) -> None:
    arena = make_arena(started_ago_s=58 * 60)  # two minutes left
    a, b, c, d = players(4)
    join_all(arena, [a, b, c, d])
    services.pair_arena(arena.pk)
    m1, m2 = current(arena, a), current(arena, c if current(arena, c) != current(arena, a) else d)
    win(tables, m1, m1.player0)  # ends in time: counted
    m2 = tables.start(m2)
    clock.shift(121)  # the arena is over; m2 is still being played
    services.pairing_pass()
    arena.refresh_from_db()
    assert arena.finished
    tables.resign(m2, m2.player1)
    points = {u.username: entry(arena, u).points for u in (a, b, c, d)}
    assert sorted(points.values()) == [0, 0, 0, 2]
    assert Pairing.objects.get(match=m2).counted is False
    # Final ranks are fixed: the winner of the counted match is first.
    ranks = {entry(arena, u).final_rank for u in (a, b, c, d)}
    assert ranks == {1, 2, 3, 4}
    assert entry(arena, m1.player0).final_rank == 1


def test_joining_after_the_end_is_refused_and_creates_nothing(transactional_db: Any) -> None:
    arena = make_arena(started_ago_s=61 * 60)
    a = make_user("late")
    with pytest.raises(services.ArenaError) as e:
        services.join(arena.pk, a)
    assert e.value.code == "arena_over"
    assert not Entry.objects.filter(arena=arena).exists()


def test_bot_accounts_play_casual_arenas_only(transactional_db: Any) -> None:
    rated, casual = make_arena(), make_arena(rated=False)
    bot = make_user("botty", is_bot=True)
    with pytest.raises(services.ArenaError) as e:
        services.join(rated.pk, bot)
    assert e.value.code == "bot_not_rated"
    assert not Entry.objects.filter(arena=rated).exists()
    services.join(casual.pk, bot)
    services.join(casual.pk, make_user("human"))
    (mid,) = services.pair_arena(casual.pk).paired
    assert Match.objects.get(pk=mid).kind == Match.Kind.CASUAL
    # A player who turns their account into a bot after joining a rated arena is
    # not paired there any more.
    a, b = players(2)
    for u in (a, b):
        services.join(rated.pk, u)
    type(a).objects.filter(pk=a.pk).update(is_bot=True)
    assert services.pair_arena(rated.pk).paired == []


def test_rated_arena_matches_change_ratings_like_any(
    arena: Arena, tables: Tables, settings: Any
) -> None:
    from ratings.services import rating_of

    # A resign right after 開始 is too short to be rated (matches.play.fairplay,
    # the next test): here the rating's wiring is the subject, not that rule.
    settings.RATED_MIN_DECISIONS = 0
    a, b = players(2)
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    win(tables, current(arena, a), a)
    assert rating_of(a).value > 1500 > rating_of(b).value


def test_a_rated_arena_match_resigned_at_once_moves_no_rating(arena: Arena, tables: Tables) -> None:
    from ratings.services import rating_of

    a, b = players(2)
    join_all(arena, [a, b])
    services.pair_arena(arena.pk)
    m = win(tables, current(arena, a), a)
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.winner_seat == m.seats_of(a.pk)[0]
    # The arena's ranked rules are the queue's: each player needs 3 decisions.
    assert m.rating_delta is None and m.unrated_reason == "too_short"
    assert rating_of(a).value == 1500 == rating_of(b).value


def test_standings_are_pushed_once_per_change(arena: Arena) -> None:
    a, b = players(2)
    join_all(arena, [a, b])
    assert push.push_standings() == [arena.pk]
    assert push.push_standings() == []  # nothing changed since: no second push
    services.pause(arena.pk, a)
    assert push.push_standings() == [arena.pk]


def test_one_pass_seats_everyone_waiting_at_once_with_the_queries_of_a_small_one(
    arena: Arena, tables: Tables
) -> None:
    """A crowded arena's first pass makes all its matches together (a fixed number of
    queries, not ~10 a match), each as complete as a match made alone."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from matches.models import MatchEvent, QueueEntry
    from matches.signals import queue_left
    from ratings.models import PlayerRating

    small, crowd = players(4, "s"), players(20, "c")
    join_all(arena, small)
    QueueEntry.objects.create(user=small[0], rating=1500)  # as in the crowd below
    with CaptureQueriesContext(connection) as few:
        assert len(services.pair_arena(arena.pk).paired) == 2
    busy = crowd[0]  # in a match elsewhere: left out of the pass
    tables.casual(busy, make_user("elsewhere"))
    queued = crowd[1]
    QueueEntry.objects.create(user=queued, rating=1500)
    PlayerRating.objects.create(user=crowd[2], rating=1723, rated_matches=12)
    heard: list[int] = []

    def on_left(sender: Any, user_ids: Any, **kwargs: Any) -> None:
        heard.extend(user_ids)

    queue_left.connect(on_left)
    try:
        join_all(arena, crowd)
        with CaptureQueriesContext(connection) as many:
            made = services.pair_arena(arena.pk).paired
    finally:
        queue_left.disconnect(on_left)
    assert len(made) == 9  # 19 free players: one waits for the next pass
    assert len(many) <= len(few), "\n".join(q["sql"][:90] for q in many.captured_queries)
    seated = [u for m in Match.objects.filter(pk__in=made) for u in (m.player0_id, m.player1_id)]
    assert len(seated) == len(set(seated)) == 18 and busy.pk not in seated
    for m in Match.objects.filter(pk__in=made):
        assert m.status == Match.Status.WAITING and m.kind == Match.Kind.RANKED
        assert MatchEvent.objects.filter(match=m, kind="created").count() == 1
        p = Pairing.objects.get(match=m)
        assert {p.user0_id, p.user1_id} == {m.player0_id, m.player1_id}
        assert entry(arena, m.player0).last_opponent_id == m.player1_id
        assert entry(arena, m.player1).last_opponent_id == m.player0_id
        assert current(arena, m.player0) == m == current(arena, m.player1)
        assert m.player_names == [m.player0.username, m.player1.username]
    # The player bars show each one's rating as the lobby does.
    shown = next(
        m.player_ratings[[m.player0_id, m.player1_id].index(crowd[2].pk)]
        for m in Match.objects.filter(pk__in=made)
        if crowd[2].pk in (m.player0_id, m.player1_id)
    )
    assert shown["value"] == 1723
    # Taken out of the ranked queue, and only the queued player's lobby is told.
    if queued.pk in seated:
        assert not QueueEntry.objects.filter(user=queued).exists() and heard == [queued.pk]
    else:
        assert QueueEntry.objects.filter(user=queued).exists() and heard == []
