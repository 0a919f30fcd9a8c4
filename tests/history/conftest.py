"""People and tables for the history, replay, profile and leaderboard tests.

alice and bob play each other, carol and dave are a second pair, the outsider
only looks. Matches are made and played through the real services (see
``Tables``); ``tables.play(m, n)`` makes ``n`` real decisions with the first
legal action of whoever is to act, pressing 次へ between hands.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

import engine
from matches import services
from matches.models import Match

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    # The real hasher costs ~0.5 s a user; these tests make many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(name: str, **extra: Any) -> Any:
    return get_user_model().objects.create_user(name, password=PASSWORD, **extra)


@pytest.fixture
def alice(db: Any) -> Any:
    return _user("alice")


@pytest.fixture
def bob(db: Any) -> Any:
    return _user("bob")


@pytest.fixture
def carol(db: Any) -> Any:
    return _user("carol")


@pytest.fixture
def dave(db: Any) -> Any:
    return _user("dave")


@pytest.fixture
def outsider(db: Any) -> Any:
    return _user("outsider")


@pytest.fixture
def staff(db: Any) -> Any:
    return _user("referee", is_staff=True)


def frame_for(action: engine.Action) -> dict[str, Any]:
    """The client frame (PROTOCOL.md) that asks for ``action``."""
    frame: dict[str, Any] = {"op": action.kind}
    if action.kind == "place":
        assert action.tile is not None
        frame["tile"] = list(action.tile)
        frame["at"] = (
            None if action.at is None else {"tile": list(action.at[0]), "side": action.at[1]}
        )
    if action.kind == "bid":
        frame["amount"] = action.amount
    return frame


class Tables:
    """Make and play matches through ``matches.services``."""

    def ranked(self, a: Any, b: Any) -> Match:
        with transaction.atomic():
            return services._new_match(Match.Kind.RANKED, a, b)

    def casual(self, a: Any, b: Any) -> Match:
        return services.accept_invite(services.create_invite(a).code, b)

    def same_device(self, a: Any, guest: str = "Guest") -> Match:
        return services.create_same_device(a, guest)

    def fresh(self, m: Match) -> Match:
        return Match.objects.select_related("player0", "player1").get(pk=m.pk)

    def act(self, m: Match, user: Any, op: str, **extra: Any) -> services.Outcome:
        frame = {"op": op, "version": self.fresh(m).version, **extra}
        return services.act(m.pk, user, frame, services.now_ms())

    def start(self, m: Match) -> Match:
        players = [m.player0] if m.player1_id is None else [m.player0, m.player1]
        for u in players:
            self.act(m, u, "start")
        return self.fresh(m)

    def resign(self, m: Match, user: Any) -> Match:
        self.act(m, user, "resign")
        return self.fresh(m)

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
def tables(db: Any, settings: Any) -> Tables:
    settings.MATCH_TIMERS = "asyncio"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.DEAL_SEED = 5
    return Tables()
