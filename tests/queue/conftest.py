"""People, ratings and a clock for the ranked-queue tests.

alice, bob, carol and dave queue up; the outsider only watches. Ratings come
from ``ratings`` in real play; here ``rate(user, 1600)`` sets what the queue
reads (``matches.lobby.matchmaking.rating_for``), since reaching a rating through rated play
is the ratings tests' business. ``clock`` is a stopped ``time_machine`` clock
that a test moves by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from matches.lobby import matchmaking as queue
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match
from matches.play import timing
from matches.play.act import act
from tests.support import use_embedded_default

# alice, bob, carol, dave, outsider and clock come from tests/conftest.py.


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    return use_embedded_default(settings)


@pytest.fixture
def rate(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, int], None]:
    """``rate(user, 1650)``: the rating the queue reads for ``user`` (1500 otherwise)."""
    table: dict[int, int] = {}
    monkeypatch.setattr(queue, "rating_for", lambda user: table.get(user.pk, 1500))

    def set_rating(user: Any, rating: int) -> None:
        table[user.pk] = rating

    return set_rating


@pytest.fixture
def played() -> Callable[[Any, Any], Match]:
    """``played(a, b)``: a and b played a casual match (invite, then a resign: over)."""

    def play(a: Any, b: Any) -> Match:
        inv = create_invite(a)
        m = accept_invite(inv.code, b)
        act(m.pk, a, {"op": "resign", "version": m.version}, timing.now_ms())
        m.refresh_from_db()
        assert m.is_over
        return m

    return play
