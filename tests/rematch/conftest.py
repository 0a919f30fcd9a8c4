"""People and finished matches for the rematch tests.

``finished(kind)`` makes a match through the real services and ends it: a
ranked one through the ranked queue (both press 開始, seat 0 resigns), a casual
one through an invite, a same-device one for alice and a guest. ``say(m, user,
op)`` sends a frame as the match socket would.
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
def clock() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


def say(m: Match, user: Any, op: str) -> services.Outcome:
    version = Match.objects.get(pk=m.pk).version
    return services.act(m.pk, user, {"op": op, "version": version}, services.now_ms())


@pytest.fixture
def frame() -> Callable[[Match, Any, str], services.Outcome]:
    return say


@pytest.fixture
def finished(alice: Any, bob: Any) -> Callable[[str], Match]:
    def make(kind: str) -> Match:
        if kind == Match.Kind.RANKED:
            queue.join(alice)
            m = queue.join(bob).match
            assert m is not None
        elif kind == Match.Kind.CASUAL:
            m = services.accept_invite(services.create_invite(alice).code, bob)
        else:
            m = services.create_same_device(alice, "Guest")
        for u in {m.player0, m.player1 or m.player0}:
            say(m, u, "start")
        say(m, m.player0, "resign")
        m.refresh_from_db()
        assert m.status == Match.Status.FINISHED
        return m

    return make
