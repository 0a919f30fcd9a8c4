"""The web process is killed while the computer is to act: the new process plays on.

Embedded default (the computer decides where the sweeper runs: in the web
process). The computer's turn is a wake-up time in the match row, so the process
that starts next finds it — no memory of the old process is needed.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

import engine
from matches import computer, services
from matches.models import Match, MatchEvent
from tests.processes import WebProcess, server_env, wait_for
from tests.support import frame_for

pytestmark = pytest.mark.django_db(transaction=True)

DECISIONS = {"place", "bid", "accept", "decline", "draw", "pass"}


def computer_decided_after(match_id: int, version: int, seat: int) -> bool:
    return any(
        e.data.get("player") == seat and e.kind in DECISIONS
        for e in MatchEvent.objects.filter(match_id=match_id, version__gt=version)
    )


def test_the_computer_moves_after_its_web_process_was_killed_and_restarted(
    alice: Any, tmp_path: Path
) -> None:
    env = server_env(COMPUTER_PAUSE_MS="2500,2500")  # time to kill it before it moves
    web = WebProcess(tmp_path, "web-1", env).start()
    try:
        m = computer.play(alice, 1)
        human = 0 if m.player0_id == alice.pk else 1
        services.act(m.pk, alice, {"op": "start", "version": m.version}, services.now_ms())
        m.refresh_from_db()
        state = engine.from_dict(m.state)
        if state.to_act == human:  # hand the turn to the computer
            action = engine.legal_actions(state)[0]
            services.act(m.pk, alice, frame_for(action, m.version), services.now_ms())
            m.refresh_from_db()
        assert engine.from_dict(m.state).to_act == 1 - human
        version = m.version
        web.signal(signal.SIGKILL)
        web.wait(10)
    finally:
        web.stop()
    assert Match.objects.get(pk=m.pk).version == version  # the computer never got to move
    again = WebProcess(tmp_path, "web-2", env).start()
    try:
        # Wait for the computer's own decision: a slow restart is an outage the new
        # process credits first, which bumps the version without a move.
        wait_for(
            lambda: computer_decided_after(m.pk, version, 1 - human),
            20,
            "the computer's move after the restart",
        )
        after = Match.objects.get(pk=m.pk)
        assert after.status == Match.Status.LIVE
    finally:
        again.stop()
