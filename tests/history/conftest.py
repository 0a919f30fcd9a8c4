"""People and tables for the history, replay, profile and leaderboard tests.

alice and bob play each other, carol and dave are a second pair, the outsider
only looks. Matches are made and played through the real services (see
``Tables``); ``tables.play(m, n)`` makes ``n`` real decisions with the first
legal action of whoever is to act, pressing 次へ between hands.
"""

from __future__ import annotations

from typing import Any

import pytest

import engine
from matches.models import Match
from tests.support import FAST_HASHERS, PASSWORD, Tables, frame_for, make_user, use_embedded_default

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


class PlayingTables(Tables):
    """``Tables`` that also play: real decisions, the first legal action each."""

    def user_at(self, m: Match, seat: int) -> Any:
        return m.player0 if seat == 0 or m.player1_id is None else m.player1

    def play(self, m: Match, decisions: int, *, all_in: bool = False) -> Match:
        """Make up to ``decisions`` real decisions (first legal action), continuing hands.

        ``all_in`` bids the most one can afford in every auction, which ends the
        match by balance at the first auction (a bidder pays its whole balance).
        """
        for _ in range(decisions):
            m = self.fresh(m)
            if m.is_over:
                break
            state = engine.from_dict(m.state)
            if state.phase == engine.HAND_OVER:
                for seat in (0, 1) if m.player1_id else (0,):
                    self.act(m, self.user_at(m, seat), "continue")
                continue
            seat = state.to_act
            if state.awaiting_reveal:
                self.act(m, self.user_at(m, seat), "reveal")
                continue
            legal = engine.legal_actions(state)
            action = legal[-1] if all_in and state.phase == engine.AUCTION else legal[0]
            frame = frame_for(action)
            self.act(m, self.user_at(m, seat), frame.pop("op"), **frame)
        return self.fresh(m)


@pytest.fixture
def tables(db: Any, settings: Any) -> PlayingTables:
    use_embedded_default(settings, deal_seed=5)
    return PlayingTables()
