"""People, ratings and a clock for the ranked-queue tests.

alice, bob, carol and dave queue up; the outsider only watches. Ratings come
from ``ratings`` in real play; here ``rate(user, 1600)`` sets what the queue
reads (``matches.queue.rating_for``), since reaching a rating through rated play
is the ratings tests' business. ``clock`` is a stopped ``time_machine`` clock
that a test moves by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model

from matches import queue, services
from matches.models import Match

START = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def _user(name: str) -> Any:
    # No password: hashing one costs more than the whole test.
    return get_user_model().objects.create_user(name)


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


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    settings.MATCH_TIMERS = "asyncio"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.DEAL_SEED = None
    settings.MATCH_BACKGROUND = False
    return settings


@pytest.fixture
def rate(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, int], None]:
    """``rate(user, 1650)``: the rating the queue reads for ``user`` (1500 otherwise)."""
    table: dict[int, int] = {}
    monkeypatch.setattr(queue, "rating_for", lambda user: table.get(user.pk, 1500))

    def set_rating(user: Any, rating: int) -> None:
        table[user.pk] = rating

    return set_rating


@pytest.fixture
def clock() -> Iterator[time_machine.Traveller]:
    """A stopped clock at START; ``clock.shift(10)`` moves it 10 s on."""
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


@pytest.fixture
def played() -> Callable[[Any, Any], Match]:
    """``played(a, b)``: a and b played a casual match (invite, then a resign: over)."""

    def play(a: Any, b: Any) -> Match:
        inv = services.create_invite(a)
        m = services.accept_invite(inv.code, b)
        services.act(m.pk, a, {"op": "resign", "version": m.version}, services.now_ms())
        m.refresh_from_db()
        assert m.is_over
        return m

    return play
