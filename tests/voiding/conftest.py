"""People, a clock and live matches for the voiding tests.

alice and bob get a live ranked match through the real services (both join the
ranked queue, both press 開始); carol and dave a second one. ``clock`` is a
stopped ``time_machine`` clock; heartbeats are written by
``voiding.beat(kind, name)`` at the clock's time, so an outage is simulated by
moving the clock without beating. ``pushes`` records every view push.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from matches import broadcast, queue, services
from matches.models import Match
from tests.support import use_embedded_default

# alice, bob, carol, dave, outsider and clock come from tests/conftest.py.


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    return use_embedded_default(settings)


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids whose views were pushed to the seats, in order."""
    sent: list[int] = []
    real = broadcast.push_match

    def spy(match_id: int) -> None:
        sent.append(match_id)
        real(match_id)

    monkeypatch.setattr(broadcast, "push_match", spy)
    return sent


@pytest.fixture
def live_ranked(
    django_capture_on_commit_callbacks: Any,
) -> Callable[[Any, Any], Match]:
    """``live_ranked(a, b)``: a and b paired by the ranked queue, both pressed 開始."""

    def make(a: Any, b: Any) -> Match:
        with django_capture_on_commit_callbacks(execute=True):
            queue.join(a)
            m = queue.join(b).match
            assert m is not None
            for u in (a, b):
                services.act(m.pk, u, {"op": "start", "version": m.version}, services.now_ms())
        m.refresh_from_db()
        assert m.status == Match.Status.LIVE
        return m

    return make
