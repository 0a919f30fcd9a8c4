"""People and tables for the history, replay, profile and leaderboard tests.

alice and bob play each other, carol and dave are a second pair, the outsider
only looks. Matches are made and played through the real services (see
``Tables`` in tests/support.py); ``tables.play(m, n)`` makes ``n`` real decisions with the first
legal action of whoever is to act, pressing 次へ between hands.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import FAST_HASHERS, PASSWORD, Tables, make_user, use_embedded_default

# alice, bob, carol, dave and outsider come from tests/conftest.py, with PASSWORD.


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture
def user_password() -> str:
    return PASSWORD


@pytest.fixture
def staff(db: Any) -> Any:
    return make_user("referee", PASSWORD, is_staff=True)


@pytest.fixture
def tables(db: Any, settings: Any) -> Tables:
    use_embedded_default(settings, deal_seed=5)
    # These tests are about what a rated match does (Elo, pages), made quickly by a
    # resign after 開始 and by the same two players again and again: the fair-play
    # rules that would leave such matches unrated (matches.play.fairplay) are tested
    # in tests/trust/.
    settings.RATED_MIN_DECISIONS = 0
    settings.RATED_PAIR_LIMIT = 10**6
    return Tables()
