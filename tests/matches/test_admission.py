"""Admission control: a saturated web process refuses new work and keeps serving live matches.

Saturation is made deterministic: the test notes a loop lag past the limit
(as ``matches.realtime.periodic``'s tick does when the loop falls behind), so the
process is saturated for :data:`matches.play.admission.WINDOW_S` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import connections
from django.test import Client
from matchplay import frame_for, new_casual
from wsclient import close_code, db_state, open_socket

import engine
from matches.lobby import matchmaking as queue
from matches.models import Invite, Match, QueueEntry
from matches.play import admission, dbpool, timing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_signals(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A slow moment counts for 2 s; a loaded test machine may take longer than that
    # between the saturation and the requests it must refuse.
    monkeypatch.setattr(admission, "WINDOW_S", 600.0)
    settings.ADMISSION = True
    settings.ADMISSION_LOOP_LAG_MS = 250
    admission.reset()
    yield
    admission.reset()


def saturate() -> None:
    admission.note_loop_lag(5_000)  # the loop came back five seconds late
    assert admission.saturated() == "loop_lag"


def _client(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _new_work_answers(user: Any) -> dict[str, Any]:
    """Every way to start something, tried once: what each answered, and what exists after."""
    c = _client(user)
    api = c.post("/api/invites/", content_type="application/json")
    computer = c.post("/api/matches/computer/", {"level": 1}, content_type="application/json")
    page = c.post("/matches/same-device/", {"guest_name": "Guest"}, HTTP_ACCEPT_LANGUAGE="ja")
    join = c.post("/queue/join/")
    return {
        "api": api,
        "computer": computer,
        "page": page,
        "join": join,
        "invites": Invite.objects.count(),
        "matches": Match.objects.count(),
        "queued": QueueEntry.objects.count(),
    }


async def started(alice: Any, bob: Any, settings: Any) -> tuple[Any, Any, Any]:
    """A casual match both have pressed 開始 in (version 2), and its two seats' sockets."""
    settings.DEAL_SEED = 4
    match = await database_sync_to_async(new_casual)(alice, bob)
    a = await open_socket(match.pk, alice)
    b = await open_socket(match.pk, bob)
    await a.send({"op": "start", "version": 0})
    await b.state_at(1)
    await b.send({"op": "start", "version": 1})
    await a.state_at(2)
    return match, a, b


async def test_a_saturated_process_refuses_a_new_match_with_503_and_still_serves_a_live_one(
    alice: Any, bob: Any, carol: Any, outsider: Any, settings: Any
) -> None:
    match, a, b = await started(alice, bob, settings)
    try:
        await b.state_at(2)
        before = await database_sync_to_async(
            lambda: (Invite.objects.count(), Match.objects.count())
        )()

        saturate()
        got = await database_sync_to_async(_new_work_answers)(carol)
        for key in ("api", "computer", "page", "join"):
            assert got[key].status_code == 503, key
            # Twenty times past its limit: come back at the longest wait, not in 5 s.
            assert got[key]["Retry-After"] == "30", key
        body = json.loads(got["api"].content)
        assert body["code"] == "overloaded" and body["retry_after"] == 30 and body["message"]
        assert json.loads(got["computer"].content)["code"] == "overloaded"
        assert "混雑しています" in got["page"].content.decode()
        # Nothing was half-made: no invite, no match, nobody in the queue.
        assert (got["invites"], got["matches"], got["queued"]) == (*before, 0)
        assert admission.refusals["api_invite_create"] >= 1

        # The live match goes on: a move reaches both seats, and a seat reconnects.
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        await (a if action.player == 0 else b).send(frame_for(action, 2))
        assert (await a.state_at(3))["version"] == 3
        assert (await b.state_at(3))["version"] == 3
        await b.comm.disconnect()
        b = await open_socket(match.pk, bob)
        assert b.frames[0]["version"] == 3
        # A newcomer's socket (a spectator) is asked to come back later: 1013.
        saturate()
        assert await close_code(match.pk, outsider) == 1013
    finally:
        await a.comm.disconnect()
        await b.comm.disconnect()


def test_with_headroom_again_the_same_requests_start_matches(
    carol: Any, caplog: pytest.LogCaptureFixture
) -> None:
    saturate()
    with caplog.at_level(logging.INFO):
        assert _client(carol).post("/api/invites/").status_code == 503
    # Counted and logged once as what it is, not as a server error.
    assert [r.levelname for r in caplog.records if "refused" in r.getMessage()] == ["INFO"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    admission.reset()  # the window passed without a slow moment
    r = _client(carol).post("/api/invites/")
    assert r.status_code == 200 and Invite.objects.filter(creator=carol).count() == 1


def test_pages_that_start_nothing_are_served_while_saturated(alice: Any, bob: Any) -> None:
    m = new_casual(alice, bob)
    saturate()
    c = _client(alice)
    assert c.get(f"/matches/{m.pk}/").status_code == 200
    assert c.get(f"/api/matches/{m.pk}/state/").status_code == 200
    assert c.get("/").status_code in (200, 302)


def test_a_slow_moment_refuses_only_for_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "WINDOW_S", 2.0)
    w = admission._Window()
    w.note(900, now=100.0)
    w.note(30, now=101.0)
    assert w.worst(now=101.5) == 900
    assert w.worst(now=102.5) == 30  # the 900 is over two seconds old
    assert w.worst(now=104.0) == 0


def test_each_limit_is_its_own_reason(settings: Any) -> None:
    settings.ADMISSION_DB_WAIT_MS = 100
    settings.ADMISSION_QUEUED_FRAMES = 4
    assert admission.Headroom(0, 0, 0).saturated() is None
    assert admission.Headroom(251, 0, 0).saturated() == "loop_lag"
    assert admission.Headroom(0, 101, 0).saturated() == "db_wait"
    assert admission.Headroom(0, 0, 5).saturated() == "frames_queued"
    assert admission.Headroom(0, 0, 0, handshake_wait_ms=1_999).saturated() is None
    assert admission.Headroom(0, 0, 0, handshake_wait_ms=2_001).saturated() == "handshake_wait"
    assert admission.Headroom(0, 0, 0, push_delay_ms=149).saturated() is None
    assert admission.Headroom(0, 0, 0, push_delay_ms=151).saturated() == "push_delay"
    settings.ADMISSION = False  # switched off: never refuses
    assert admission.Headroom(9_999, 9_999, 99).saturated() is None


def test_the_wait_asked_of_a_refused_client_grows_with_the_pressure(
    carol: Any, settings: Any
) -> None:
    settings.ADMISSION_RETRY_AFTER_S = 5
    settings.ADMISSION_RETRY_AFTER_MAX_S = 30
    assert admission.retry_after_s(0.7) == 5  # paced, not saturated
    assert admission.retry_after_s(1.0) == 5
    assert admission.retry_after_s(2.0) == 10  # twice past the limit: twice as long
    assert admission.retry_after_s(3.2) == 16
    assert admission.retry_after_s(20.0) == 30
    settings.ADMISSION_PUSH_DELAY_MS = 500
    admission.note_push_delay(1_500)
    assert admission.headroom().pressure() == pytest.approx(3.0)
    r = _client(carol).post("/api/invites/")
    assert r.status_code == 503 and r["Retry-After"] == "15"
    assert json.loads(r.content)["retry_after"] == 15


def test_the_pacer_lets_new_matches_in_slower_as_the_pressure_rises(settings: Any) -> None:
    settings.ADMISSION_PACE_PER_S = 4
    p = admission.Pacer()
    # Under half of every limit: no pacing at all.
    assert all(p.take(0.4, now=10.0) for _ in range(50))
    # At 0.75 of a limit: 2 a second, one at a time (no burst after a quiet spell).
    assert p.rate(0.75) == pytest.approx(2.0)
    assert p.take(0.75, now=20.0)
    assert not p.take(0.75, now=20.1)
    assert not p.take(0.75, now=20.4)
    assert p.take(0.75, now=20.6)  # half a second after the last start
    assert p.take(0.75, now=40.0) and not p.take(0.75, now=40.0)
    # At the limit: none.
    assert p.rate(1.0) == 0.0
    assert not p.take(1.0, now=60.0) and not p.take(1.0, now=90.0)


def test_under_pressure_new_matches_are_paced_and_accepting_an_invite_is_not(
    alice: Any, bob: Any, carol: Any, settings: Any
) -> None:
    settings.ADMISSION_PUSH_DELAY_MS = 500
    settings.ADMISSION_PACE_PER_S = 1  # at 0.8 of the limit: one start every 2.5 s
    invite = _client(alice).post("/api/invites/")
    assert invite.status_code == 200
    admission.note_push_delay(400)  # 0.8 of the limit: not saturated, but near
    assert admission.saturated() is None
    assert admission.headroom().pressure() == pytest.approx(0.8)

    first = _client(carol).post("/api/invites/")
    second = _client(carol).post("/api/invites/")
    assert first.status_code == 200
    assert second.status_code == 503 and second["Retry-After"] == "5"
    assert json.loads(second.content)["code"] == "overloaded"
    assert admission.refusals["api_invite_create"] >= 1
    assert Invite.objects.filter(creator=carol).count() == 1  # the refused one made nothing
    # An invite made before is accepted all the same: that match was already let in.
    code = json.loads(invite.content)["code"]
    accepted = _client(bob).post(f"/api/invites/{code}/accept/")
    assert accepted.status_code == 200 and Match.objects.count() == 1
    # The pages that start nothing are served.
    assert _client(carol).get("/").status_code in (200, 302)


def test_the_pacer_can_say_whether_a_start_would_go_without_spending_it(settings: Any) -> None:
    settings.ADMISSION_PACE_PER_S = 4
    p = admission.Pacer()
    assert p.could_take(0.4, now=1.0) and p.could_take(0.75, now=1.0)
    assert p.take(0.75, now=1.0)  # the one start the bucket held
    assert not p.could_take(0.75, now=1.1) and not p.take(0.75, now=1.1)
    assert p.could_take(0.75, now=1.6) and p.could_take(0.75, now=1.6)  # asking spent nothing
    assert p.take(0.75, now=1.6)
    assert not p.could_take(1.0, now=100.0)  # at the limit: none, however long it waited
    assert p.could_take(0.4, now=1.7)  # under pacing: always


def _refused_reading_nothing(
    client: Client, path: str, django_assert_num_queries: Any, **extra: Any
) -> Any:
    """POST ``path``: refused at the first door, no session, user or anything read."""
    with django_assert_num_queries(0):
        r = client.post(path, content_type="application/json", **extra)
    assert r.status_code == 503, r.content[:200]
    assert r["Retry-After"].isdigit()
    return r


def test_a_saturated_process_refuses_before_reading_the_session_or_the_user(
    carol: Any, django_assert_num_queries: Any
) -> None:
    saturate()
    c = _client(carol)
    counted = admission.refusals["api_invite_create"]
    api = _refused_reading_nothing(c, "/api/invites/", django_assert_num_queries)
    assert json.loads(api.content)["code"] == "overloaded"
    page = _refused_reading_nothing(c, "/matches/same-device/", django_assert_num_queries)
    assert "混雑しています" in page.content.decode()
    assert page["Content-Language"] == "ja"
    assert "Content-Security-Policy" in page  # the browser policies still apply
    # In the language the request asks for, as the rest of the site would answer it.
    english = _refused_reading_nothing(
        c, "/api/invites/", django_assert_num_queries, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert json.loads(english.content)["message"].startswith("The server is busy")
    assert english["Content-Language"] == "en"
    assert {"accept-language", "cookie"} <= {v.strip().lower() for v in english["Vary"].split(",")}
    c.cookies["django_language"] = "en"
    cookie = _refused_reading_nothing(c, "/matches/same-device/", django_assert_num_queries)
    assert "The server is busy" in cookie.content.decode()
    assert Invite.objects.count() == 0 and Match.objects.count() == 0
    assert admission.refusals["api_invite_create"] == counted + 2  # each counted once


def test_a_new_match_the_pacer_has_no_start_for_is_refused_at_the_first_door(
    carol: Any, settings: Any, django_assert_num_queries: Any
) -> None:
    settings.ADMISSION_PUSH_DELAY_MS = 500
    settings.ADMISSION_PACE_PER_S = 1
    admission.note_push_delay(400)  # 0.8 of the limit: paced, not saturated
    c = _client(carol)
    assert c.post("/api/invites/").status_code == 200  # the start the pacer held
    _refused_reading_nothing(c, "/api/invites/", django_assert_num_queries)
    assert Invite.objects.filter(creator=carol).count() == 1


def test_an_anonymous_request_spends_no_start_of_the_pacer(carol: Any, settings: Any) -> None:
    settings.ADMISSION_PUSH_DELAY_MS = 500
    settings.ADMISSION_PACE_PER_S = 1
    admission.note_push_delay(400)
    # Let through the first door (a start is there to take), turned away by the login
    # check before the second door takes it.
    for _ in range(3):
        assert Client().post("/api/invites/").status_code == 401
    assert _client(carol).post("/api/invites/").status_code == 200


def test_the_queue_does_not_pair_while_saturated(alice: Any, bob: Any) -> None:
    queue.join(alice, pair=False)
    queue.join(bob, pair=False)
    saturate()
    assert queue.sweep() == []
    assert QueueEntry.objects.count() == 2 and not Match.objects.exists()  # still waiting
    admission.reset()
    made = queue.sweep()
    assert len(made) == 1 and {made[0].player0_id, made[0].player1_id} == {alice.pk, bob.pk}


def test_a_live_matchs_work_goes_before_waiting_handshakes_on_the_match_threads() -> None:
    pool = dbpool.PriorityExecutor(1, thread_name_prefix="test-db")
    gate = threading.Event()
    order: list[str] = []
    try:
        pool.submit(gate.wait)  # the one thread is busy
        with dbpool.lane(dbpool.BACKGROUND):
            lobby = pool.submit(order.append, "lobby")
        with dbpool.lane(dbpool.HANDSHAKE):
            hs = [pool.submit(order.append, f"handshake{i}") for i in range(3)]
        move = pool.submit(order.append, "move")
        gate.set()
        for f in (lobby, *hs, move):
            f.result(timeout=5)
        assert order == ["move", "handshake0", "handshake1", "handshake2", "lobby"]
    finally:
        pool.shutdown()


def _order_served(handshake_age_s: float) -> list[str]:
    """What one busy match thread serves next when three handshakes, four moves and a
    lobby read wait, the handshakes first in line."""
    pool = dbpool.PriorityExecutor(1, thread_name_prefix="test-db", handshake_age_s=handshake_age_s)
    busy, gate = threading.Event(), threading.Event()
    order: list[str] = []
    try:
        pool.submit(lambda: (busy.set(), gate.wait()))
        assert busy.wait(timeout=5)  # the one thread is busy before anything queues
        with dbpool.lane(dbpool.HANDSHAKE):
            calls = [pool.submit(order.append, f"handshake{i}") for i in range(3)]
        with dbpool.lane(dbpool.BACKGROUND):
            calls.append(pool.submit(order.append, "lobby"))
        calls += [pool.submit(order.append, f"move{i}") for i in range(4)]
        gate.set()
        for f in calls:
            f.result(timeout=5)
        return order
    finally:
        pool.shutdown()


def test_a_handshake_kept_waiting_by_endless_moves_is_let_in_every_other_turn() -> None:
    # After one web process's fault the other carries every match: its threads never
    # run out of moves, and with strict priority a reconnecting socket's reads waited
    # until play thinned (sockets back 10-20 s after the process was healthy). Handshakes
    # that have not waited long yet still go after the live match's frames.
    assert _order_served(handshake_age_s=60) == [
        "move0", "move1", "move2", "move3", "handshake0", "handshake1", "handshake2", "lobby",
    ]  # fmt: skip
    # Kept waiting (an age of 0: every waiting handshake is past it): one in two turns.
    assert _order_served(handshake_age_s=0) == [
        "handshake0", "move0", "handshake1", "move1", "handshake2", "move2", "move3", "lobby",
    ]  # fmt: skip


def test_frames_queued_is_the_fullest_socket() -> None:
    class Q:
        def __init__(self, n: int) -> None:
            self.n = n

        def qsize(self) -> int:
            return self.n

    assert admission.frames_queued([Q(0), Q(7), Q(2)]) == 7
    assert admission.frames_queued([]) == 0


def test_the_process_queues_are_counted_at_most_every_scan_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pulse asks 20 times a second; every socket is looked at only every QUEUE_SCAN_S."""

    class Q:
        def __init__(self, n: int) -> None:
            self.n = n
            self.asked = 0

        def qsize(self) -> int:
            self.asked += 1
            return self.n

    admission.reset()
    q = Q(3)
    admission.watch_queue(q)
    monkeypatch.setattr(admission, "QUEUE_SCAN_S", 3600.0)
    assert admission.frames_queued() >= 3
    q.n = 12
    assert admission.frames_queued() < 12 and q.asked == 1  # the last count, not a new one
    monkeypatch.setattr(admission, "QUEUE_SCAN_S", 0.0)
    assert admission.frames_queued() >= 12 and q.asked == 2
    assert admission.headroom().saturated() == "frames_queued"


def test_on_redis_the_workers_pairing_holds_off_while_any_web_process_is_saturated(
    settings: Any, require_redis: str
) -> None:
    import uuid

    import redis

    settings.REDIS_URL = require_redis
    settings.LIVENESS_PREFIX = prefix = f"sbtest{uuid.uuid4().hex[:8]}"
    try:
        assert not admission.tier_saturated()
        saturate()
        admission.publish("web-1")  # web-1's pulse thread says so
        admission.reset()  # this process (the worker, say) has headroom itself
        assert admission.saturated() is None and admission.tier_saturated()
        admission.publish("web-1")  # web-1 recovered: said at once, not a second later
        assert not admission.tier_saturated()
    finally:
        client = redis.Redis.from_url(require_redis)
        keys = client.keys(f"{prefix}*")
        if keys:
            client.delete(*keys)
        client.close()


def test_the_liveness_thread_reads_the_queues_while_sockets_come_and_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The drill at 200 matches: ``frames_queued`` (read by the liveness pulse's thread)
    raised "Set changed size during iteration" while a reconnect wave opened sockets,
    and that pulse's beat was lost. It must read a consistent count meanwhile."""
    import queue as queue_mod
    import sys
    import time

    from matches.play import admission

    monkeypatch.setattr(admission, "QUEUE_SCAN_S", 0.0)  # every read counts them all

    errors: list[BaseException] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            try:
                admission.frames_queued()
            except BaseException as e:  # noqa: BLE001 - any failure is the finding
                errors.append(e)
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    reader = threading.Thread(target=read)
    reader.start()
    try:
        kept: list[Any] = []
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not errors:
            for _ in range(50):
                q: Any = queue_mod.Queue()
                admission.watch_queue(q)
                kept.append(q)
            del kept[:40]  # sockets closed: their queues leave the WeakSet
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(old)
    assert errors == []


def _wait_in(pool: dbpool.PriorityExecutor, priority: int, seconds: float) -> None:
    """One call in ``priority``'s lane that waits ``seconds`` behind a busy thread."""
    gate = threading.Event()
    pool.submit(gate.wait)
    with dbpool.lane(priority):
        call = pool.submit(lambda: None)
    threading.Timer(seconds, gate.set).start()
    call.result(timeout=10)


def test_a_wait_counts_against_its_lanes_limit(settings: Any) -> None:
    # Lobby sockets' reads wait behind every live match's frames and every handshake by
    # design, and a ramp of newcomers' handshakes behind the live frames: neither is
    # saturation until a handshake waits seconds. A live match's frame that waits a
    # quarter of a second is.
    settings.ADMISSION_HANDSHAKE_WAIT_MS = 600
    pool = dbpool.PriorityExecutor(1, thread_name_prefix="test-db")
    try:
        _wait_in(pool, dbpool.BACKGROUND, 0.4)
        assert admission.headroom().db_wait_ms < 100 and admission.saturated() is None
        _wait_in(pool, dbpool.HANDSHAKE, 0.4)
        assert admission.headroom().handshake_wait_ms >= 400
        assert admission.saturated() is None
        _wait_in(pool, dbpool.HANDSHAKE, 0.7)
        assert admission.saturated() == "handshake_wait"
        admission.reset()
        _wait_in(pool, dbpool.PLAY, 0.4)
        assert admission.headroom().db_wait_ms >= 400 and admission.saturated() == "db_wait"
    finally:
        pool.shutdown()


async def test_moves_reaching_their_sockets_late_refuse_new_work_and_the_match_goes_on(
    alice: Any, bob: Any, carol: Any, settings: Any
) -> None:
    """A change that reaches a seat's socket long after its frame was received (a backlog
    in the channel layer or the shared cores, which neither the loop's lag nor the match
    threads' wait shows) saturates the process: newcomers are refused, the match plays on."""
    from channels.layers import get_channel_layer

    from matches.realtime import broadcast

    # Above what a loaded test machine's pushes take (signals count for the whole test
    # here), below the late push's 2 s.
    settings.ADMISSION_PUSH_DELAY_MS = 1_500
    match, a, b = await started(alice, bob, settings)
    try:
        assert admission.saturated() is None  # the pushes so far were quick
        # A push of version 2 arrives again, 2 s after its frame was received.
        loop = asyncio.get_running_loop()
        noted = asyncio.Event()

        def on_signal(kind: str, ms: float) -> None:  # admission's listeners (metrics)
            if kind == "push_delay" and ms >= 2_000:
                loop.call_soon_threadsafe(noted.set)

        admission._listeners.append(on_signal)
        try:
            late = {"type": "match.frame", "version": 2, "t": timing.now_ms() - 2_000}
            await get_channel_layer().group_send(broadcast.group_name(match.pk, "seat1"), late)
            await asyncio.wait_for(noted.wait(), 5)  # bob's socket read it
        finally:
            admission._listeners.remove(on_signal)
        assert admission.saturated() == "push_delay"
        assert admission.headroom().push_delay_ms >= 2_000
        got = await database_sync_to_async(_new_work_answers)(carol)
        assert got["api"].status_code == 503 and got["matches"] == 1  # nothing new made
        # The match goes on: a move reaches both seats (the late copy changed nothing).
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        await (a if action.player == 0 else b).send(frame_for(action, 2))
        assert (await a.state_at(3))["version"] == 3
        assert (await b.state_at(3))["version"] == 3
    finally:
        await a.comm.disconnect()
        await b.comm.disconnect()


async def test_while_a_wave_of_seats_reconnects_new_matches_wait_and_every_seat_gets_back(
    alice: Any,
    bob: Any,
    carol: Any,
    dave: Any,
    outsider: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a restart every seat's socket comes back at once: while that many handshakes
    are in progress, a new match is refused (its CPU is the seats'), and every seat's
    socket is let in and sent its view."""
    from matches.realtime import match_consumer

    settings.ADMISSION_OPENING_SOCKETS = 3
    m1 = await database_sync_to_async(new_casual)(alice, bob)
    m2 = await database_sync_to_async(new_casual)(carol, dave)
    # The handshakes are held at their first read until all four are in progress.
    gate = threading.Event()
    opening_read = match_consumer._open

    def held(*args: Any) -> Any:
        assert gate.wait(10)
        return opening_read(*args)

    monkeypatch.setattr(match_consumer, "_open", held)
    four = asyncio.Event()
    note = admission._opening.note

    def noted(value: float, now: float | None = None) -> None:
        note(value, now)
        if value >= 4:
            four.set()

    monkeypatch.setattr(admission._opening, "note", noted)
    seats = [(m1, alice), (m1, bob), (m2, carol), (m2, dave)]
    opening = [asyncio.ensure_future(open_socket(m.pk, u)) for m, u in seats]
    sockets = []
    try:
        await asyncio.wait_for(four.wait(), 10)
        assert admission.saturated() == "reconnect_wave"
        got = await database_sync_to_async(_new_work_answers)(outsider)
        assert got["api"].status_code == 503 and got["page"].status_code == 503
        assert json.loads(got["api"].content)["code"] == "overloaded"
        assert (got["invites"], got["matches"], got["queued"]) == (2, 2, 0)
        gate.set()
        sockets = list(await asyncio.gather(*opening))
        assert [s.frames[0]["version"] for s in sockets] == [0, 0, 0, 0]
    finally:
        gate.set()
        for s in sockets:
            await s.comm.disconnect()
        # The requests' thread keeps its connection otherwise, and the test database
        # cannot be dropped under it.
        await sync_to_async(connections.close_all)()


def test_a_few_sockets_opening_together_is_not_a_wave(settings: Any) -> None:
    settings.ADMISSION_OPENING_SOCKETS = 40
    with admission.opening_socket(), admission.opening_socket():
        assert admission.headroom().opening == 2
    assert admission.saturated() is None
    assert admission.Headroom(0, 0, 0, opening=41).saturated() == "reconnect_wave"
