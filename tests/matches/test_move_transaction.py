"""A player's move through its transaction: it opens with its row's read and commits
in the round trip of its own writes (PostgreSQL: two answers of the database in all)
and is published only once the COMMIT is answered; its JSON
is written and read whole; and where it waited is told stage by stage."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

import engine
from matches.models import Match
from matches.play import stages, timing
from matches.play.act import act
from matches.play.errors import ServiceError
from matches.signals import match_changed
from tests.support import database_waits, frame_for, live_casual

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]


def _live(alice: Any, bob: Any, settings: Any) -> tuple[Match, Any, dict[str, Any]]:
    """A live match, the seat to act's user, and the frame of its first legal action."""
    settings.DEAL_SEED = 4
    m = live_casual(alice, bob)
    action = engine.legal_actions(engine.from_dict(m.state))[0]
    return m, (alice if action.player == 0 else bob), frame_for(action, m.version)


def _version_seen_elsewhere(match_id: int) -> int:
    """The match's version as another connection sees it: what is committed."""
    params = connection.get_connection_params()
    with psycopg.connect(**params) as other:
        row = other.execute(
            "SELECT version FROM matches_match WHERE id = %s", [match_id]
        ).fetchone()
        assert row is not None
        return int(row[0])


def test_a_move_is_committed_with_its_writes_and_published_after_the_commit(
    alice: Any, bob: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m, mover, frame = _live(alice, bob, settings)
    left_for_django: list[int] = []
    real_commit = BaseDatabaseWrapper._commit

    def commit(self: Any) -> Any:
        # What is still open when Django's own commit comes: nothing, for a move.
        left_for_django.append(self.connection.info.transaction_status)
        return real_commit(self)

    monkeypatch.setattr(BaseDatabaseWrapper, "_commit", commit)
    seen_when_published: list[int] = []

    def published(sender: Any, change: Any, **kwargs: Any) -> None:
        seen_when_published.append(_version_seen_elsewhere(change.match_id))

    match_changed.connect(published)
    try:
        out = act(m.pk, mover, frame, timing.now_ms())
    finally:
        match_changed.disconnect(published)
    assert out.error is None and out.change is not None
    assert left_for_django == [psycopg.pq.TransactionStatus.IDLE]
    # Pushed once, and by then any other connection read the new version.
    assert seen_when_published == [m.version + 1]


def test_a_move_waits_for_the_database_twice_its_begin_going_with_its_row(
    alice: Any, bob: Any, settings: Any
) -> None:
    m, mover, frame = _live(alice, bob, settings)
    out, waits = database_waits(lambda: act(m.pk, mover, frame, timing.now_ms()))
    assert out.error is None and out.change is not None
    # The row's read with the BEGIN, then the writes with the COMMIT: nothing alone.
    assert len(waits) == 2, waits
    assert waits[0].startswith('Query "BEGIN') and "FOR UPDATE" in waits[0], waits
    assert waits[1] == "Sync"
    assert _version_seen_elsewhere(m.pk) == m.version + 1
    # The connection is as Django left it: in autocommit, no transaction open.
    assert connection.get_autocommit() and connection.connection.autocommit
    assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_move_refused_after_its_row_was_read_leaves_nothing_open(
    alice: Any, bob: Any, settings: Any
) -> None:
    m, mover, frame = _live(alice, bob, settings)
    other = bob if mover == alice else alice

    def out_of_turn() -> str:
        with pytest.raises(ServiceError) as refused:
            act(m.pk, other, frame, timing.now_ms())
        return refused.value.code

    code, waits = database_waits(out_of_turn)
    assert code == "not_your_turn"
    assert waits[0].startswith('Query "BEGIN') and waits[-1].startswith('Query "ROLLBACK')
    assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert connection.get_autocommit() and connection.connection.autocommit
    assert _version_seen_elsewhere(m.pk) == m.version
    # The next transaction on this connection is a transaction as any other: what it
    # wrote is rolled back with it.
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        Match.objects.filter(pk=m.pk).update(version=m.version + 50)
        raise RuntimeError
    assert _version_seen_elsewhere(m.pk) == m.version
    assert act(m.pk, mover, frame, timing.now_ms()).error is None  # and the move is made


def test_a_commit_that_fails_publishes_nothing_and_changes_nothing(
    alice: Any, bob: Any, settings: Any
) -> None:
    m, mover, frame = _live(alice, bob, settings)
    with connection.cursor() as c:
        # A check that runs at COMMIT (a deferred constraint trigger): it refuses this one.
        c.execute(
            "CREATE FUNCTION sb_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$"
        )
        c.execute(
            "CREATE CONSTRAINT TRIGGER sb_test_refuse AFTER INSERT ON matches_matchevent "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sb_test_refuse()"
        )
    published: list[Any] = []

    def on_change(sender: Any, change: Any, **kwargs: Any) -> None:
        published.append(change)

    match_changed.connect(on_change)
    try:
        with pytest.raises(Exception, match="refused at commit"):
            act(m.pk, mover, frame, timing.now_ms())
    finally:
        match_changed.disconnect(on_change)
        with connection.cursor() as c:
            c.execute("DROP TRIGGER IF EXISTS sb_test_refuse ON matches_matchevent")
            c.execute("DROP FUNCTION IF EXISTS sb_test_refuse()")
    assert published == []
    assert _version_seen_elsewhere(m.pk) == m.version
    # The connection is usable again and the move can still be made.
    out = act(m.pk, mover, frame, timing.now_ms())
    assert out.error is None and out.change is not None
    assert _version_seen_elsewhere(m.pk) == m.version + 1


def test_the_rows_json_is_read_and_written_whole_even_where_orjson_cannot(
    alice: Any, bob: Any, settings: Any
) -> None:
    """The hot path's JSON goes through orjson; a value it cannot take (an integer
    past 64 bits) goes through the standard library, as Django would, not lost."""
    from django.db import transaction

    from matches.play import store

    m, _, _ = _live(alice, bob, settings)
    big = {"big": 2**70, "名前": "ありす", "7": [1.5, None, True]}
    with transaction.atomic():
        locked = store.locked_match(m.pk)
        assert locked is not None and locked.state == Match.objects.get(pk=m.pk).state
        locked.last_credit = big
        store._write_row(locked)
    with transaction.atomic():
        again = store.locked_match(m.pk)
        assert again is not None and again.last_credit == big
    assert Match.objects.get(pk=m.pk).last_credit == big


def test_a_move_waiting_for_its_rows_lock_shows_the_wait_in_the_locked_stage(
    alice: Any, bob: Any, settings: Any
) -> None:
    from django.db import connections

    m, mover, frame = _live(alice, bob, settings)
    seen: list[tuple[str, float]] = []
    stages._listeners.append(lambda stage, s: seen.append((stage, s)))
    holder = psycopg.connect(**connection.get_connection_params())
    holder.execute("SELECT 1 FROM matches_match WHERE id = %s FOR UPDATE", [m.pk])
    outcome: list[Any] = []

    def player() -> None:
        try:
            stages.begin()  # as the consumer does on reading the frame
            outcome.append(act(m.pk, mover, frame, timing.now_ms()))
        finally:
            connections.close_all()

    t = threading.Thread(target=player)
    try:
        t.start()
        deadline = time.monotonic() + 10
        with psycopg.connect(**connection.get_connection_params(), autocommit=True) as watch:
            while True:  # until the move has waited for the lock a fifth of a second
                row = watch.execute(
                    "SELECT max(extract(epoch FROM clock_timestamp() - query_start)) "
                    "FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE '%%FOR UPDATE%%'"
                ).fetchone()
                if row and row[0] is not None and float(row[0]) >= 0.2:
                    break
                assert time.monotonic() < deadline, "the move never waited for the lock"
        holder.rollback()  # the lock is let go
        t.join(10)
    finally:
        holder.close()
        stages._listeners.pop()
    assert outcome and outcome[0].error is None
    got = dict(seen)
    assert list(got) == list(stages.STAGES)  # each stage once, in order
    assert got["locked"] >= 0.2
    assert got["locked"] == max(got.values())  # the wait was the lock's, not another stage's
