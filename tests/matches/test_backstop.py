"""The deadline backstop: a match nobody touches still ends on time, and promptly.

Two connected players start a match with a short clock (1.5 s main time,
0.5 s delay) and then do nothing. Both sockets must receive the result (phase
``match_over``, end ``time``) within 1 s of the deadline shown in their view:
once with the embedded default (asyncio timer in this process, in-memory
channel layer), once with Celery (a real worker process, the Redis channel
layer). The lateness is printed and recorded as a test property.

The last tests drive ``services.check_match`` with explicit times: a backstop,
however late, never lets a late move through, and a stale one does nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from matchplay import Table, frame_for, new_casual, snapshot
from wsclient import Socket, open_socket

import engine
from config.settings import redis_channel_layer
from matches import services
from matches.models import Match

ROOT = Path(__file__).resolve().parents[2]
MAIN_MS, DELAY_MS = 1_500, 500
LATE_LIMIT_MS = 1_000


@pytest.fixture
def short_clock(settings: Any) -> Any:
    settings.MATCH_MAIN_MS = MAIN_MS
    settings.MATCH_DELAY_MS = DELAY_MS
    settings.DEAL_SEED = 21
    return settings


async def _nobody_moves(match: Match, alice: Any, bob: Any) -> list[int]:
    """Start the match on two sockets, wait; return how late each socket heard the result."""
    a = await open_socket(match.pk, alice)
    b = await open_socket(match.pk, bob)
    try:
        await a.send({"op": "start", "version": 0})
        await a.state_at(1)
        await b.state_at(1)
        await b.send({"op": "start", "version": 1})
        started = [await s.state_at(2) for s in (a, b)]
        deadlines = {f["view"]["clocks"]["deadline"] for f in started}
        assert len(deadlines) == 1
        deadline = deadlines.pop()
        assert deadline is not None
        assert started[0]["view"]["phase"] == engine.PLAY
        loser = started[0]["view"]["to_act"]
        lateness = []
        for sock in (a, b):
            frame = await _result(sock)
            lateness.append(services.now_ms() - deadline)
            view = frame["view"]
            assert view["phase"] == engine.MATCH_OVER and view["end"] == "time"
            assert view["winner"] == 1 - loser
            assert view["match"]["result"] == {"winner": 1 - loser, "end": "time"}
            assert view["clocks"]["main"][loser] == 0
        m = await database_sync_to_async(Match.objects.get)(pk=match.pk)
        assert m.status == Match.Status.FINISHED and m.end_reason == "time"
        return lateness
    finally:
        await a.comm.disconnect()
        await b.comm.disconnect()


async def _result(sock: Socket) -> dict[str, Any]:
    # The deadline is ~2 s away; Socket.until waits up to WAIT s per frame.
    return await sock.until(lambda f: f["type"] == "state" and f["view"]["phase"] == "match_over")


def _report(record_property: Callable[[str, Any], None], name: str, lateness: list[int]) -> None:
    record_property(f"{name}_lateness_ms", lateness)
    print(f"\n{name} backstop: result heard {lateness} ms after the deadline")
    for late in lateness:
        assert 0 <= late < LATE_LIMIT_MS, lateness


@pytest.mark.django_db(transaction=True)
async def test_the_embedded_timer_ends_an_untouched_match_within_a_second_of_its_deadline(
    alice: Any, bob: Any, short_clock: Any, record_property: Callable[[str, Any], None]
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    lateness = await _nobody_moves(match, alice, bob)
    _report(record_property, "asyncio", lateness)


# --- Celery: a real worker process ----------------------------------------------------------


@pytest.fixture
def celery_worker(
    require_postgres: None,
    require_redis: str,
    transactional_db: None,
    settings: Any,
    tmp_path: Path,
) -> Iterator[str]:
    """A ``celery -A config worker`` process on the test database, with its own queue and prefix.

    Redis db 15 is shared by test runs, so this run's queue and channel-layer
    prefix are its own. The worker reads the test database's committed rows.
    """
    from celery import Celery

    from config.celery import app as project_app

    tag = f"sbtest{uuid.uuid4().hex[:10]}"
    layer = redis_channel_layer(require_redis, prefix=tag)
    settings.CHANNEL_LAYERS = {"default": layer}
    settings.MATCH_TIMERS = "celery"
    (tmp_path / f"{tag}_settings.py").write_text(
        "from config.settings import *  # noqa: F403\n"
        f"CHANNEL_LAYERS = {{'default': {layer!r}}}\n"
        f"CELERY_TASK_DEFAULT_QUEUE = {tag!r}\n"
    )
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": f"{tag}_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        "DATABASE_URL": (
            f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
            f"{db['PORT'] or 5432}/{db['NAME']}"
        ),
        "REDIS_URL": require_redis,
    }
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                tag,
                "-P",
                "solo",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "info",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    # This process publishes with an app of its own on the same broker and queue,
    # so the project app's (in-memory broker) configuration is left untouched.
    publisher = Celery("sbtest-publisher", set_as_current=False)
    publisher.config_from_object("django.conf:settings", namespace="CELERY")
    publisher.conf.update(broker_url=require_redis, task_default_queue=tag)
    publisher.set_default()  # the timers publish from other threads: default, not just current
    publisher.set_current()
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log.read_text():
            if worker.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield tag
    finally:
        project_app.set_default()
        project_app.set_current()
        publisher.close()
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        _forget_queue(require_redis, tag)


def _forget_queue(url: str, queue: str) -> None:
    """Drop this run's queue from the shared Redis (the start-window timers left in it)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.delete(queue, f"_kombu.binding.{queue}")
    finally:
        client.close()


@pytest.mark.django_db(transaction=True)
async def test_a_celery_worker_ends_an_untouched_match_within_a_second_of_its_deadline(
    alice: Any,
    bob: Any,
    short_clock: Any,
    celery_worker: str,
    record_property: Callable[[str, Any], None],
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    lateness = await _nobody_moves(match, alice, bob)
    _report(record_property, "celery", lateness)


# --- late and stale backstops, with explicit times --------------------------------------------


@pytest.fixture
def live(alice: Any, bob: Any, settings: Any) -> tuple[Table, engine.MatchState, int]:
    settings.DEAL_SEED = 21
    table = Table(new_casual(alice, bob), [alice, bob])
    table.start(services.now_ms())
    s = table.state
    assert s is not None
    deadline = engine.deadline(s)
    assert deadline is not None and s.to_act is not None
    return table, s, deadline


@pytest.mark.django_db
def test_a_backstop_that_wakes_before_the_deadline_changes_nothing(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    before = snapshot(table.match_id)
    assert services.check_match(table.match_id, table.version, now=deadline - 1) is False
    assert snapshot(table.match_id) == before


@pytest.mark.django_db
def test_the_backstop_at_the_deadline_ends_the_match_on_time(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    loser = s.to_act
    assert services.check_match(table.match_id, table.version, now=deadline) is True
    m = table.refresh()
    assert m.status == Match.Status.FINISHED and m.end_reason == "time"
    assert m.winner_seat == 1 - (loser or 0)
    # Idempotent: run again (same or new version) it does nothing more.
    before = snapshot(table.match_id)
    assert services.check_match(table.match_id, table.version - 1, now=deadline + 5) is False
    assert services.check_match(table.match_id, table.version, now=deadline + 5) is False
    assert snapshot(table.match_id) == before


@pytest.mark.django_db
def test_a_move_arriving_exactly_at_the_deadline_loses_even_before_the_backstop_runs(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    loser = s.to_act
    assert loser is not None
    out = table.send(loser, frame_for(engine.legal_actions(s)[0], table.version), deadline)
    assert out.error is not None and out.error.code == "timeout"
    m = table.match
    assert m.status == Match.Status.FINISHED
    assert m.end_reason == "time" and m.winner_seat == 1 - loser
    after = table.state
    assert after is not None and after.layout.placed == s.layout.placed  # not applied
    # The backstop, when it comes, finds nothing to do.
    assert services.check_match(table.match_id, table.version, now=deadline + 3_000) is False


@pytest.mark.django_db
def test_a_late_backstop_never_lets_a_late_move_through(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    loser = s.to_act
    assert loser is not None
    frame = frame_for(engine.legal_actions(s)[0], table.version)
    # The backstop runs 3 s late; a move that arrived after the deadline comes after it.
    assert services.check_match(table.match_id, table.version, now=deadline + 3_000) is True
    before = snapshot(table.match_id)
    with pytest.raises(services.ServiceError) as e:
        table.send(loser, frame, deadline + 10)
    assert e.value.code == "match_over"
    assert snapshot(table.match_id) == before
    m = table.match
    assert m.end_reason == "time" and m.winner_seat == 1 - loser


@pytest.mark.django_db
def test_a_move_in_time_makes_the_backstop_of_its_decision_stale(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    scheduled_for = table.version
    table.do(engine.legal_actions(s)[0], deadline - 1)
    assert table.match.status == Match.Status.LIVE
    before = snapshot(table.match_id)
    # The old timer fires late, past the old deadline: it is for an old version.
    assert services.check_match(table.match_id, scheduled_for, now=deadline + 2_000) is False
    assert snapshot(table.match_id) == before
