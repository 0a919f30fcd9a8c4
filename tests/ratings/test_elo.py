"""Elo as pure functions, against worked numbers."""

from __future__ import annotations

import doctest

import pytest

from ratings import elo


def test_equal_ratings_with_k_40_move_by_20() -> None:
    assert elo.expected_score(1500, 1500) == 0.5
    assert elo.rating_changes(1500, 1500, 1.0, 40, 40) == (20, -20)
    assert elo.rating_changes(1500, 1500, 0.0, 40, 40) == (-20, 20)


def test_1600_beating_1400_expects_076_and_moves_10() -> None:
    assert round(elo.expected_score(1600, 1400), 2) == 0.76
    assert round(elo.expected_score(1400, 1600), 2) == 0.24
    assert elo.rating_changes(1600, 1400, 1.0, 40, 40) == (10, -10)


def test_the_upset_moves_30() -> None:
    # 1400 beats 1600: 40 × (1 − 0.24) = 30.4 → 30.
    assert elo.rating_changes(1400, 1600, 1.0, 40, 40) == (30, -30)


def test_each_player_uses_its_own_k() -> None:
    # A newcomer (K 40) beats an established player (K 20), both at 1500.
    assert elo.rating_changes(1500, 1500, 1.0, 40, 20) == (20, -10)
    assert elo.rating_changes(1500, 1500, 0.0, 20, 40) == (-10, 20)


def test_k_is_40_for_the_first_30_rated_matches_then_20() -> None:
    assert [elo.k_factor(n) for n in (0, 1, 29)] == [40, 40, 40]
    assert [elo.k_factor(n) for n in (30, 31, 500)] == [20, 20, 20]


def test_a_rating_is_provisional_for_the_first_30_matches() -> None:
    assert elo.is_provisional(0) and elo.is_provisional(29)
    assert not elo.is_provisional(30)


def test_changes_are_whole_points_rounded_half_away_from_zero() -> None:
    assert elo.round_half_away(0.5) == 1
    assert elo.round_half_away(-0.5) == -1
    assert elo.round_half_away(9.49) == 9
    for a, b in [(1500, 1500), (1523, 1477), (1800, 1200), (1200, 1800)]:
        for s in (0.0, 1.0):
            da, db = elo.rating_changes(a, b, s, 20, 20)
            assert isinstance(da, int) and isinstance(db, int)
            assert da == -db  # same K: zero-sum


def test_it_rejects_a_score_outside_0_and_1() -> None:
    with pytest.raises(ValueError):
        elo.rating_changes(1500, 1500, 2.0, 40, 40)


def test_the_docstring_examples_hold() -> None:
    result = doctest.testmod(elo)
    assert result.attempted > 0 and result.failed == 0
