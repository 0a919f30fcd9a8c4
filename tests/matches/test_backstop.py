"""The deadline sweeper: a match nobody touches still ends on time, and promptly,
whatever happened to the process that was meant to look at it.

Two connected players start a match with a short clock (1.5 s main time,
0.5 s delay) and then do nothing. Both sockets must receive the result (phase
``match_over``, end ``time``) within 1 s of the deadline shown in their view:
once with the embedded default (the sweeper on this process's loop, in-memory
channel layer), once with Celery (a real worker process whose sweeper thread
finds the deadline in the database; the Redis channel layer). The lateness is
printed and recorded as a test property.

Then the faults: a worker killed with SIGKILL while a deadline is pending
resolves it within 2 s of its restart; a match created while Redis is
unreachable still ends; and nobody stays busy because of a dead match.

The last tests drive ``check_match`` with explicit times: a sweep,
however late, never lets a late move through, and a stale one does nothing.
"""

from __future__ import annotations

import os
import signal
import socket
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
from matches.clock.deadlines import GRACE_MS, check_match
from matches.lobby import matchmaking as queue
from matches.lobby.invites import create_invite
from matches.models import Heartbeat, Match
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError
from matches.realtime import periodic
from tests.processes import LOGS

ROOT = Path(__file__).resolve().parents[2]
MAIN_MS, DELAY_MS = 1_500, 500
LATE_LIMIT_MS = 1_000


@pytest.fixture
def short_clock(settings: Any) -> Any:
    settings.MATCH_MAIN_MS = MAIN_MS
    settings.MATCH_DELAY_MS = DELAY_MS
    settings.DEAL_SEED = 21
    return settings


@pytest.fixture
async def background(settings: Any) -> Any:
    """This process runs its web background work (tick, pulse; embedded: the sweeper)."""
    settings.MATCH_BACKGROUND = True
    yield settings
    await periodic.stop()


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
            lateness.append(timing.now_ms() - deadline)
            view = frame["view"]
            assert view["phase"] == engine.MATCH_OVER and view["end"] == "time"
            assert view["winner"] == 1 - loser
            assert view["match"]["result"] == {
                "winner": 1 - loser,
                "end": "time",
                "rated": False,
                "unrated_reason": "casual",
            }
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
    print(f"\n{name} sweeper: result heard {lateness} ms after the deadline")
    for late in lateness:
        assert 0 <= late < LATE_LIMIT_MS, lateness


@pytest.mark.django_db(transaction=True)
async def test_the_embedded_sweeper_ends_an_untouched_match_within_a_second_of_its_deadline(
    alice: Any,
    bob: Any,
    short_clock: Any,
    background: Any,
    record_property: Callable[[str, Any], None],
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    lateness = await _nobody_moves(match, alice, bob)
    _report(record_property, "embedded", lateness)


# --- Celery: a real worker process ----------------------------------------------------------


class Worker:
    """A ``celery -A config worker`` process on the test database, with its own prefixes.

    Redis db 15 is shared by test runs, so this run's queue, channel-layer prefix
    and liveness keys are its own. The worker reads the test database's committed rows.
    """

    def __init__(self, tmp_path: Path, redis_url: str, tag: str) -> None:
        layer = redis_channel_layer(redis_url, prefix=tag)
        (tmp_path / f"{tag}_settings.py").write_text(
            "from config.settings import *  # noqa: F403\n"
            f"CHANNEL_LAYERS = {{'default': {layer!r}}}\n"
            f"CELERY_TASK_DEFAULT_QUEUE = {tag!r}\n"
            f"LIVENESS_PREFIX = {tag!r}\n"
        )
        db = connection.settings_dict
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": f"{tag}_settings",
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
            "DATABASE_URL": (
                f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
                f"{db['PORT'] or 5432}/{db['NAME']}"
            ),
            "REDIS_URL": redis_url,
            "MATCH_SWEEPER": "celery",
        }
        self.tag = tag
        self.log = tmp_path / "worker.log"
        LOGS.append(self.log)  # a failing test shows the end of it
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start the worker, wait for its sweeper's first pass; returns when it said "ready."."""
        self.log.write_text("")
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-Q",
                    self.tag,
                    "-P",
                    "solo",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-l",
                    "info",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        # Ready once its sweeper has made a whole pass (its first housekeeping beats
        # under this process's name): "ready." alone is before the sweeper thread's
        # first imports, which a loaded machine took seconds over (CI: a result 4.2 s
        # after the deadline, the same moment for both sockets).
        deadline = time.monotonic() + 60
        ready: float | None = None
        while ready is None or not self._sweeper_beat():
            if ready is None and "ready." in self.log.read_text():
                ready = time.monotonic()
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not start:\n{self.log.read_text()}")
            time.sleep(0.05)
        return ready

    def _sweeper_beat(self) -> bool:
        assert self.proc is not None
        name = f"{socket.gethostname()}:{self.proc.pid}:sweeper"  # liveness.worker_beat
        return Heartbeat.objects.filter(kind="worker", name=name).exists()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def worker(
    require_postgres: None,
    require_redis: str,
    transactional_db: None,
    settings: Any,
    tmp_path: Path,
) -> Iterator[Worker]:
    """A Celery worker for this test; this process plays the web tier (its pulse)."""
    tag = f"sbtest{uuid.uuid4().hex[:10]}"
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(require_redis, prefix=tag)}
    settings.REDIS_URL = require_redis
    settings.MATCH_SWEEPER = "celery"
    settings.LIVENESS_PREFIX = tag
    w = Worker(tmp_path, require_redis, tag)
    w.start()
    try:
        yield w
    finally:
        w.stop()
        _forget_keys(require_redis, tag)


def _forget_keys(url: str, tag: str) -> None:
    """Drop this run's keys from the shared Redis."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(f"*{tag}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.mark.django_db(transaction=True)
async def test_a_celery_worker_ends_an_untouched_match_within_a_second_of_its_deadline(
    alice: Any,
    bob: Any,
    short_clock: Any,
    worker: Worker,
    background: Any,
    record_property: Callable[[str, Any], None],
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    lateness = await _nobody_moves(match, alice, bob)
    _report(record_property, "celery", lateness)


def _wait_for(pred: Callable[[], bool], timeout_s: float, what: str) -> float:
    """Poll ``pred`` until it holds; returns when (monotonic). Fails after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not pred():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout_s} s")
        time.sleep(0.02)
    return time.monotonic()


def _status(match_id: int) -> str:
    return str(Match.objects.filter(pk=match_id).values_list("status", flat=True).get())


@pytest.mark.django_db(transaction=True)
def test_a_deadline_pending_when_the_worker_is_killed_is_resolved_within_2_s_of_its_return(
    alice: Any, bob: Any, carol: Any, settings: Any, worker: Worker
) -> None:
    settings.MATCH_START_WINDOW_MS = settings.INVITE_START_WINDOW_MS = 1_000
    match = new_casual(alice, bob)  # nobody presses 開始: aborted after 1 s
    worker.kill()
    from matches.clock import liveness

    # The web tier stays up meanwhile (this process proves it), so the deadline is real.
    _wait_for(lambda: timing.now_ms() > match.ready_deadline_ms + 1_000, 5, "the deadline")
    liveness.loop_tick_ms = timing.now_ms()
    liveness.pulse(timing.now_ms())
    assert _status(match.pk) == Match.Status.WAITING  # nobody looked: the worker was dead
    back = worker.start()
    pulse_until = back + 2

    def aborted() -> bool:
        if time.monotonic() < pulse_until:
            liveness.pulse(timing.now_ms())
        return _status(match.pk) == Match.Status.ABORTED

    resolved = _wait_for(aborted, 2.0, "the abort after the worker's return")
    print(f"\nresolved {1000 * (resolved - back):.0f} ms after the worker was ready")
    # And nobody stays busy because of the dead match: both may queue up again.
    queue.join(alice, pair=False)
    queue.join(bob, pair=False)


@pytest.mark.django_db(transaction=True)
def test_a_match_created_while_redis_is_unreachable_still_times_out(
    alice: Any, bob: Any, settings: Any, client: Any, require_redis: str
) -> None:
    import asyncio

    from asgiref.sync import async_to_sync, sync_to_async
    from channels.layers import get_channel_layer

    from matches.clock import liveness, sweeper
    from matches.realtime import broadcast

    # Redis down: no channel layer. The accept is committed and answered all the same.
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer("redis://127.0.0.1:1/0")}
    settings.MATCH_START_WINDOW_MS = settings.INVITE_START_WINDOW_MS = 800
    settings.MATCH_SWEEPER = "web"
    settings.REDIS_URL = ""
    inv = create_invite(alice)
    client.force_login(bob)
    r = client.post(f"/api/invites/{inv.code}/accept/")
    assert r.status_code == 200, r.content
    match_id = r.json()["match_id"]
    # alice presses 開始: committed, but its push fails and is marked for the sweeper.
    out = act(match_id, alice, {"op": "start", "version": 0}, timing.now_ms())
    assert out.match.version == 1
    assert Match.objects.get(pk=match_id).needs_push

    # The deadline lives in the row: the sweeper finds it with nothing scheduled anywhere.
    window_end = Match.objects.get(pk=match_id).ready_deadline_ms + GRACE_MS
    _wait_for(lambda: timing.now_ms() >= window_end, 3, "the end of the start window")
    liveness._mark_beaten()
    sweeper.sweep_once()
    assert _status(match_id) == Match.Status.ABORTED
    queue.join(alice, pair=False)  # nobody stays busy because of it

    # Redis is back: the sweeper's housekeeping pushes the match again.
    tag = f"sbback{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(require_redis, prefix=tag)}

    async def listen_while_housekeeping() -> dict[str, Any]:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(broadcast.group_name(match_id, "seat1"), channel)
        await sync_to_async(sweeper.housekeeping)()
        return dict(await asyncio.wait_for(layer.receive(channel), 10))

    message = async_to_sync(listen_while_housekeeping)()
    assert message["type"] == "match.frame" and message["version"] == 2
    # This process's own socket is handed the change itself; its text, as a socket reads it.
    assert '"status":"aborted"' in broadcast.frame_text(message, "seat1")
    assert not Match.objects.get(pk=match_id).needs_push


# --- late and stale backstops, with explicit times --------------------------------------------


@pytest.fixture
def live(alice: Any, bob: Any, settings: Any) -> tuple[Table, engine.MatchState, int]:
    settings.DEAL_SEED = 21
    table = Table(new_casual(alice, bob), [alice, bob])
    table.start(timing.now_ms())
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
    assert check_match(table.match_id, table.version, now=deadline - 1) is False
    assert snapshot(table.match_id) == before


@pytest.mark.django_db
def test_the_backstop_at_the_deadline_ends_the_match_on_time(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    loser = s.to_act
    assert check_match(table.match_id, table.version, now=deadline) is True
    m = table.refresh()
    assert m.status == Match.Status.FINISHED and m.end_reason == "time"
    assert m.winner_seat == 1 - (loser or 0)
    # Idempotent: run again (same or new version) it does nothing more.
    before = snapshot(table.match_id)
    assert check_match(table.match_id, table.version - 1, now=deadline + 5) is False
    assert check_match(table.match_id, table.version, now=deadline + 5) is False
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
    assert check_match(table.match_id, table.version, now=deadline + 3_000) is False


@pytest.mark.django_db
def test_a_late_backstop_never_lets_a_late_move_through(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, deadline = live
    loser = s.to_act
    assert loser is not None
    frame = frame_for(engine.legal_actions(s)[0], table.version)
    # The backstop runs 3 s late; a move that arrived after the deadline comes after it.
    assert check_match(table.match_id, table.version, now=deadline + 3_000) is True
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
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
    assert check_match(table.match_id, scheduled_for, now=deadline + 2_000) is False
    assert snapshot(table.match_id) == before


@pytest.mark.django_db(transaction=True)
def test_healthz_reports_the_worker_and_its_sweeps(
    worker: Worker, settings: Any, client: Any, require_redis: str, monkeypatch: Any
) -> None:
    from config.celery import app

    # This process asks over the same broker as the worker's (settings read REDIS_URL at start).
    monkeypatch.setitem(app.conf, "broker_url", require_redis)
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setitem(app.conf, "task_default_queue", worker.tag)
    _wait_for(
        lambda: client.get("/healthz", {"format": "json"}).status_code == 200,
        10,
        "a healthy /healthz",
    )
    body = client.get("/healthz", {"format": "json"}).json()
    assert {k.split("(")[0] for k in body} == {"Database", "Redis", "Ping", "Sweeper"}
    worker.kill()
    _wait_for(
        lambda: client.get("/healthz", {"format": "json"}).status_code == 500,
        15,
        "/healthz noticing the dead worker",
    )
    body = client.get("/healthz", {"format": "json"}).json()
    assert body["Database(alias='default')"] == "OK"
    assert any("Ping" in k and v != "OK" for k, v in body.items())
