"""People and finished matches for the rematch tests.

``finished(kind)`` makes a match through the real services and ends it: a
ranked one through the ranked queue (both press 開始, seat 0 resigns), a casual
one through an invite, a same-device one for alice and a guest. ``say(m, user,
op)`` sends a frame as the match socket would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from matches.lobby import matchmaking as queue
from matches.lobby import rematch
from matches.lobby.invites import accept_invite, create_invite, create_same_device
from matches.models import Match
from matches.play import timing
from matches.play.act import Outcome, act
from matches.play.frames import REMATCH_OPS
from tests.support import use_embedded_default

# alice, bob, carol, dave, outsider and clock come from tests/conftest.py.


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    return use_embedded_default(settings)


def say(m: Match, user: Any, op: str) -> Outcome:
    """What the match socket does with ``op``: rematch ops go to ``matches.lobby.rematch``."""
    if op in REMATCH_OPS:
        return rematch.act_rematch(m.pk, user, op)
    version = Match.objects.get(pk=m.pk).version
    return act(m.pk, user, {"op": op, "version": version}, timing.now_ms())


@pytest.fixture
def frame() -> Callable[[Match, Any, str], Outcome]:
    return say


@pytest.fixture
def finished(alice: Any, bob: Any) -> Callable[[str], Match]:
    def make(kind: str) -> Match:
        if kind == Match.Kind.RANKED:
            queue.join(alice)
            m = queue.join(bob).match
            assert m is not None
        elif kind == Match.Kind.CASUAL:
            m = accept_invite(create_invite(alice).code, bob)
        else:
            m = create_same_device(alice, "Guest")
        for u in {m.player0, m.player1 or m.player0}:
            say(m, u, "start")
        say(m, m.player0, "resign")
        m.refresh_from_db()
        assert m.status == Match.Status.FINISHED
        return m

    return make
