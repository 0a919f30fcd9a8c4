"""People, a clock and live matches for the voiding tests.

alice and bob get a live ranked match through the real services (both join the
ranked queue, both press 開始); carol and dave a second one. ``clock`` is a
stopped ``time_machine`` clock. The web tier's heartbeats are written by
``liveness.beat(tick_ms, name)`` at explicit times, so an outage is simulated by
beating again later. ``pushes`` records every change published.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from matches.lobby import matchmaking as queue
from matches.models import Match
from matches.play import timing
from matches.play.act import act
from tests.support import capture_changes, use_embedded_default

# alice, bob, carol, dave, outsider and clock come from tests/conftest.py.


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    return use_embedded_default(settings)


@pytest.fixture
def pushes() -> Any:
    """The changes published after their commit (``tests.support.capture_changes``)."""
    with capture_changes() as seen:
        yield seen


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
                act(m.pk, u, {"op": "start", "version": m.version}, timing.now_ms())
        m.refresh_from_db()
        assert m.status == Match.Status.LIVE
        return m

    return make
