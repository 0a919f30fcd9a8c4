"""Points, streaks, berserk and the pairing rules, as pure functions."""

from __future__ import annotations

import pytest

import engine
from engine import ALL_TILES, ClockConfig, Deal
from tournaments.pairing import Waiting, choose_pairs
from tournaments.scoring import LOSS, NOTHING, WIN, score


def run(results: list[str], berserks: list[bool] | None = None) -> tuple[int, int]:
    """The points and final streak of a sequence of results."""
    points = streak = 0
    for i, r in enumerate(results):
        s = score(r, streak, berserk=bool(berserks and berserks[i]))
        points, streak = points + s.points, s.streak
    return points, streak


def test_a_win_is_two_points_and_a_loss_nothing() -> None:
    assert run([WIN]) == (2, 1)
    assert run([LOSS]) == (0, 0)
    assert run([WIN, LOSS, WIN]) == (4, 1)


def test_after_two_wins_in_a_row_wins_count_double_until_a_non_win() -> None:
    # 2 + 2, then on fire: 4 + 4; a loss puts it out; the next win is 2 again.
    assert run([WIN, WIN, WIN, WIN]) == (12, 4)
    assert run([WIN, WIN, WIN, LOSS, WIN]) == (10, 1)
    assert run([WIN, WIN, LOSS, WIN, WIN, WIN]) == (4 + 2 + 2 + 4, 3)


def test_a_void_counts_nothing_and_leaves_the_streak() -> None:
    s = score(NOTHING, 2)
    assert (s.points, s.streak, s.played) == (0, 2, 0)
    # On fire before the void, still on fire after it.
    assert run([WIN, WIN, NOTHING, WIN]) == (8, 3)


def test_berserk_adds_one_point_to_a_win_only() -> None:
    assert run([WIN], [True]) == (3, 1)
    assert run([LOSS], [True]) == (0, 0)
    # The bonus is not doubled on fire: 2 + 2 + (4 + 1).
    assert run([WIN, WIN, WIN], [False, False, True]) == (9, 3)


def test_an_unknown_result_is_refused() -> None:
    with pytest.raises(ValueError):
        score("draw", 0)


def _pairs(waiting: list[Waiting]) -> set[frozenset[int]]:
    return {frozenset((a.user_id, b.user_id)) for a, b in choose_pairs(waiting)}


def test_players_are_paired_by_closeness_in_the_standings() -> None:
    w = [Waiting(uid, rank) for uid, rank in ((10, 4), (11, 1), (12, 3), (13, 2))]
    assert _pairs(w) == {frozenset((11, 13)), frozenset((12, 10))}


def test_the_same_opponent_twice_in_a_row_is_avoided_while_another_waits() -> None:
    w = [Waiting(1, 1, last_opponent_id=2), Waiting(2, 2, last_opponent_id=1), Waiting(3, 3)]
    assert _pairs(w) == {frozenset((1, 3))}
    # Four waiting, the top two just played each other: both get someone new.
    w4 = [*w, Waiting(4, 4)]
    assert _pairs(w4) == {frozenset((1, 3)), frozenset((2, 4))}


def test_the_same_opponent_again_is_allowed_when_nobody_else_waits() -> None:
    w = [Waiting(1, 1, last_opponent_id=2), Waiting(2, 2, last_opponent_id=1)]
    assert _pairs(w) == {frozenset((1, 2))}


def test_nobody_is_paired_twice_and_one_odd_player_waits() -> None:
    w = [Waiting(i, i) for i in range(1, 8)]
    pairs = choose_pairs(w)
    ids = [p.user_id for pair in pairs for p in pair]
    assert len(pairs) == 3 and len(set(ids)) == 6


def _started() -> engine.MatchState:
    return engine.new_match(Deal.from_order(list(ALL_TILES)), now_ms=0, clock=ClockConfig())


def test_berserk_halves_one_seats_main_time_and_nothing_else() -> None:
    s = _started()
    b = engine.berserk(s, 0)
    assert b.main == [60_000, 120_000]
    assert s.main == [120_000, 120_000]  # the original is untouched
    assert engine.to_dict(b) | {"main": None} == engine.to_dict(s) | {"main": None}
    # The berserk seat's deadline, when it is to act, is 60 s earlier.
    seat = s.to_act
    assert engine.deadline(engine.berserk(s, seat)) == engine.deadline(s) - 60_000


def test_berserk_is_refused_once_main_time_was_used_or_twice() -> None:
    s = _started()
    with pytest.raises(engine.IllegalAction):
        engine.berserk(engine.berserk(s, 1), 1)
    # The player to act thinks 15 s (10 s delay + 5 s of main time) and plays.
    seat = s.to_act
    action = engine.forced_action(s) or engine.legal_actions(s)[0]
    after, _ = engine.apply(s, action, 15_000)
    assert not engine.can_berserk(after, seat)
    with pytest.raises(engine.IllegalAction):
        engine.berserk(after, seat)
    with pytest.raises(engine.IllegalAction):
        engine.berserk(engine.new_match(Deal.from_order(list(ALL_TILES)), clock=None), 0)
