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
from django.contrib.auth import get_user_model
from django.db import transaction

from matches import services
from matches.models import Match

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    # The real hasher costs ~0.5 s a user; these tests make many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(name: str) -> Any:
    return get_user_model().objects.create_user(name, password=PASSWORD)


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


class Tables:
    """Make and play matches through ``matches.services``."""

    def ranked(self, a: Any, b: Any) -> Match:
        with transaction.atomic():
            return services._new_match(Match.Kind.RANKED, a, b)

    def casual(self, a: Any, b: Any) -> Match:
        return services.accept_invite(services.create_invite(a).code, b)

    def same_device(self, a: Any, guest: str = "Guest") -> Match:
        return services.create_same_device(a, guest)

    def version(self, m: Match) -> int:
        return Match.objects.get(pk=m.pk).version

    def act(self, m: Match, user: Any, op: str, **extra: Any) -> services.Outcome:
        frame = {"op": op, "version": self.version(m), **extra}
        return services.act(m.pk, user, frame, services.now_ms())

    def start(self, m: Match) -> Match:
        players = [m.player0] if m.player1_id is None else [m.player0, m.player1]
        for u in players:
            self.act(m, u, "start")
        return Match.objects.get(pk=m.pk)

    def resign(self, m: Match, user: Any) -> Match:
        self.act(m, user, "resign")
        return Match.objects.get(pk=m.pk)

    def ranked_result(self, winner: Any, loser: Any, *, winner_seat: int = 0) -> Match:
        """A ranked match, started, that ``loser`` resigns."""
        a, b = (winner, loser) if winner_seat == 0 else (loser, winner)
        return self.resign(self.start(self.ranked(a, b)), loser)


@pytest.fixture
def tables(db: Any, settings: Any) -> Tables:
    settings.MATCH_TIMERS = "asyncio"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.DEAL_SEED = 11
    return Tables()
