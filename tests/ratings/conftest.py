"""People and tables for the rating tests.

alice and bob play each other; carol and dave make a second pair; the
outsider plays no part. Matches are made and played through the real
services: ``tables.ranked(a, b)`` (the ranked queue's constructor,
``services._new_match``, until a public one exists), ``tables.casual``,
``tables.same_device``; ``tables.start`` presses 開始 for both seats and
``tables.resign`` ends a live match.
"""

from __future__ import annotations

from typing import Any

import pytest

from matches.models import Match
from tests.support import FAST_HASHERS, PASSWORD, Tables, use_embedded_default

# alice, bob, carol, dave and outsider come from tests/conftest.py, with PASSWORD.


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture
def user_password() -> str:
    return PASSWORD


class RatingTables(Tables):
    """``Tables`` that also finish ranked matches with a chosen winner."""

    def ranked_result(self, winner: Any, loser: Any, *, winner_seat: int = 0) -> Match:
        """A ranked match, started, that ``loser`` resigns."""
        a, b = (winner, loser) if winner_seat == 0 else (loser, winner)
        return self.resign(self.start(self.ranked(a, b)), loser)


@pytest.fixture
def tables(db: Any, settings: Any) -> RatingTables:
    use_embedded_default(settings, deal_seed=11)
    # These tests are about what a rated match does (Elo, pages), made quickly by a
    # resign after 開始 and by the same two players again and again: the fair-play
    # rules that would leave such matches unrated (matches.play.fairplay) are tested
    # in tests/trust/.
    settings.RATED_MIN_DECISIONS = 0
    settings.RATED_PAIR_LIMIT = 10**6
    return RatingTables()
