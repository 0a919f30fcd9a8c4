"""Elo, as pure functions: no database, no Django.

Everyone starts at ``INITIAL_RATING``. A player's K is 40 for its first
``PROVISIONAL_MATCHES`` rated matches and 20 after; each player of a match uses
its own K, so a newcomer's result moves its own rating twice as far as its
established opponent's. Changes are rounded to whole points, halves away from
zero, so that two players with the same K always move by equal and opposite
amounts.

>>> rating_changes(1500, 1500, 1.0, 40, 40)
(20, -20)
>>> rating_changes(1600, 1400, 1.0, 40, 40)
(10, -10)
>>> rating_changes(1400, 1600, 1.0, 40, 20)
(30, -15)
"""

from __future__ import annotations

import math

INITIAL_RATING = 1500
PROVISIONAL_MATCHES = 30
K_PROVISIONAL = 40
K_ESTABLISHED = 20


def expected_score(rating: int | float, opponent: int | float) -> float:
    """The score ``rating`` is expected to make against ``opponent``, between 0 and 1.

    E = 1 / (1 + 10^((opponent − rating) / 400)).

    >>> expected_score(1500, 1500)
    0.5
    >>> round(expected_score(1600, 1400), 2)
    0.76
    >>> round(expected_score(1400, 1600), 2)
    0.24
    """
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def k_factor(rated_matches: int) -> int:
    """K for a player who has finished ``rated_matches`` rated matches so far.

    >>> k_factor(0), k_factor(29), k_factor(30), k_factor(200)
    (40, 40, 20, 20)
    """
    if rated_matches < 0:
        raise ValueError("rated_matches is not negative")
    return K_PROVISIONAL if rated_matches < PROVISIONAL_MATCHES else K_ESTABLISHED


def is_provisional(rated_matches: int) -> bool:
    """A rating is provisional (shown with "?") for the first 30 rated matches.

    >>> is_provisional(29), is_provisional(30)
    (True, False)
    """
    return rated_matches < PROVISIONAL_MATCHES


def round_half_away(x: float) -> int:
    """Round to a whole number, halves away from zero (Python's ``round`` rounds to even).

    >>> [round_half_away(x) for x in (2.5, -2.5, 9.61, -9.61, 0.49)]
    [3, -3, 10, -10, 0]
    """
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def rating_changes(
    rating_a: int, rating_b: int, score_a: float, k_a: int, k_b: int
) -> tuple[int, int]:
    """The whole-point changes of A and B after a match in which A scored ``score_a``.

    ``score_a`` is 1 for a win of A and 0 for a loss (the game has no draws, but
    0.5 works). Each side's change is ``K × (S − E)`` with its own K.

    >>> rating_changes(1500, 1500, 0.0, 40, 40)
    (-20, 20)
    >>> rating_changes(1600, 1400, 0.0, 20, 20)
    (-15, 15)
    >>> rating_changes(1500, 1500, 1.0, 20, 40)
    (10, -20)
    """
    if not 0.0 <= score_a <= 1.0:
        raise ValueError("a score is between 0 and 1")
    change_a = k_a * (score_a - expected_score(rating_a, rating_b))
    change_b = k_b * ((1.0 - score_a) - expected_score(rating_b, rating_a))
    return round_half_away(change_a), round_half_away(change_b)
