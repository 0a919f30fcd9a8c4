"""The computer's timing tells nothing about its hand (issue 16, item 7).

Its move is released at a fixed time after its decision began, however long
the decision took: here a decider that sometimes answers at once and sometimes
takes 250 ms (as level 3 does when it searches, only when more than one
placement fits) still moves at the same moment after each decision's start.
Its randomness is drawn from ``secrets``, never from the match's id and version.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any

import pytest

import bots
import engine
from matches.clock import liveness, sweeper
from matches.lobby import computer
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from tests.support import frame_for

pytestmark = pytest.mark.django_db(transaction=True)

THINK_AT_MS, RELEASE_MS = 50, 1000  # room for a 250 ms search on a busy machine
SLACK_MS = 400  # the sweeper's pass, a thread hop and the database on a busy machine


@pytest.fixture
def timed(settings: Any) -> Any:
    settings.COMPUTER_PAUSE_MS = (THINK_AT_MS, RELEASE_MS)
    settings.COMPUTER_IN_PROCESS = True
    liveness._mark_beaten()
    computer.shutdown()
    yield settings
    computer.shutdown()


def test_the_computer_moves_at_a_fixed_time_whatever_it_computed(
    alice: Any, timed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = bots.decide
    seen: list[tuple[int, int, random.Random]] = []

    def uneven(view: dict[str, Any], history: Any, *, level: int, rng: random.Random) -> Any:
        seen.append((view["match"]["id"], view["match"]["version"], rng))
        if secrets.randbelow(2):
            time.sleep(0.25)  # a long search, on the decider's own thread
        return real(view, history, level=level, rng=rng)

    monkeypatch.setattr(computer.bots, "decide", uneven)
    m = computer.play(alice, 3)
    me = 0 if m.player0_id == alice.pk else 1
    act(m.pk, alice, {"op": "start", "version": m.version}, timing.now_ms())
    deadline = time.monotonic() + 120
    while len(seen) < 8:
        assert time.monotonic() < deadline, "the computer did not play"
        m = Match.objects.get(pk=m.pk)
        if m.is_over:
            break
        state = engine.from_dict(m.state)
        if state.phase == engine.HAND_OVER:
            act(m.pk, alice, {"op": "continue", "version": m.version}, timing.now_ms())
        elif state.to_act == me and not state.awaiting_reveal:
            action = engine.legal_actions(state)[0]
            act(m.pk, alice, frame_for(action, m.version), timing.now_ms())
        else:
            sweeper.sweep_once()
            time.sleep(0.005)  # the sweeper loop's own pace (MIN_SLEEP_S)
    assert len(seen) >= 8

    events = [e.data for e in MatchEvent.objects.filter(match_id=m.pk).order_by("id")]
    numbered = [e for e in events if "seq" in e]
    gaps = []
    for before, e in zip(numbered, numbered[1:], strict=False):
        decided = e["type"] in ("place", "bid", "accept", "decline") and not e.get("forced")
        if e.get("player") == 1 - me and decided:
            gaps.append(e["t"] - before["t"])  # its decision began with the event before
    assert len(gaps) >= 6
    assert all(RELEASE_MS <= g <= RELEASE_MS + SLACK_MS for g in gaps), gaps

    # Seeded from secrets: not the generator that pk:version would make.
    for match_id, version, rng in seen:
        assert rng.getstate() != random.Random(f"{match_id}:{version}").getstate()
