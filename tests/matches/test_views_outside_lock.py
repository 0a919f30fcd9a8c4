"""A change's views are built outside the match row's lock: after the COMMIT was sent.

With PostgreSQL's pipeline they are built while the COMMIT is on its way (the database
releases the lock as it commits, whatever this thread does meanwhile); they are pushed
only once it is answered.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import OperationalError, connection, connections, transaction
from matchplay import new_casual

import engine
from matches.models import Match
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
    others_locked: list[bool] = []
    real = engine.view_for

    def another_writer() -> None:
        # Another frame of the match, on its own connection: it waits for the row's lock.
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '10s'")
                table = Match._meta.db_table
                cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [m.pk])
                others_locked.append(cursor.fetchone() is not None)
        except OperationalError:
            others_locked.append(False)  # the lock was still ours after 10 s
        finally:
            connections.close_all()

    def recording(*args: Any, **kwargs: Any) -> Any:
        if not others_locked:  # while the first view is being built, on this thread
            other = threading.Thread(target=another_writer)
            other.start()
            other.join()
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "view_for", recording)
    out = act(m.pk, mover, frame_for(action, m.version), timing.now_ms())
    assert out.error is None and out.change is not None
    # The other writer had the row while this thread was building the views.
    assert others_locked == [True]
    view = out.change.view("seat0")
    assert view["match"]["version"] == m.version + 1 and view["seat"] == 0
    assert out.change.view("seat1")["hand"] != view["hand"]  # each seat its own hand
