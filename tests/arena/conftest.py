"""Arenas for the tournament tests: made running (or not), players joined, matches played.

Results reach an arena after the match's commit (``transaction.on_commit``), so
these tests run in real transactions (``transactional_db``) unless they only
read pure functions.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from matches.models import Match
from tests.support import Tables, make_user, use_embedded_default
from tournaments import services
from tournaments.models import Arena, Entry


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    settings.ARENA_REST_S = 0  # paired again at once (one test restores the rest)
    return use_embedded_default(settings)


@pytest.fixture
def tables() -> Tables:
    return Tables()


@pytest.fixture
def arena(transactional_db: Any) -> Arena:
    """A rated arena that started a minute ago and runs 60 minutes."""
    return make_arena(started_ago_s=60)


def make_arena(*, started_ago_s: int = 60, minutes: int = 60, rated: bool = True) -> Arena:
    return services.create_arena(
        "Test arena", minutes, timezone.now() - timedelta(seconds=started_ago_s), rated
    )


def players(n: int, prefix: str = "p") -> list[Any]:
    return [make_user(f"{prefix}{i}") for i in range(n)]


def entry(arena: Arena, user: Any) -> Entry:
    return Entry.objects.get(arena=arena, user=user)


def current(arena: Arena, user: Any) -> Match | None:
    e = entry(arena, user)
    return None if e.current_match_id is None else Match.objects.get(pk=e.current_match_id)


def win(tables: Tables, m: Match, winner: Any) -> Match:
    """Both press 開始, the loser resigns: ``winner`` wins."""
    m = tables.start(m)
    loser = m.player1 if m.player0_id == winner.pk else m.player0
    return tables.resign(m, loser)
