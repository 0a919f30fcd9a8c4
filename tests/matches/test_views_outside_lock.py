"""A change's views are built after its commit, outside the match row's lock."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from matchplay import new_casual

import engine
from matches.play import timing
from matches.play.act import act
from tests.support import frame_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_engine_views_of_a_move_are_built_after_the_commit(
    alice: Any, bob: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DEAL_SEED = 4
    m = new_casual(alice, bob)
    for u in (alice, bob):
        m.refresh_from_db()
        act(m.pk, u, {"op": "start", "version": m.version}, timing.now_ms())
    m.refresh_from_db()
    state = engine.from_dict(m.state)
    action = engine.legal_actions(state)[0]
    mover = alice if action.player == 0 else bob
    built_in_transaction: list[bool] = []
    real = engine.view_for

    def recording(*args: Any, **kwargs: Any) -> Any:
        built_in_transaction.append(connection.in_atomic_block)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "view_for", recording)
    out = act(m.pk, mover, frame_for(action, m.version), timing.now_ms())
    assert out.error is None and out.change is not None
    # Both seats' views were built (the push), and none while the row was locked.
    assert len(built_in_transaction) >= 2
    assert not any(built_in_transaction)
    view = out.change.view("seat0")
    assert view["match"]["version"] == m.version + 1 and view["seat"] == 0
    assert out.change.view("seat1")["hand"] != view["hand"]  # each seat its own hand
