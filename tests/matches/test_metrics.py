"""The operator's metrics: what /metrics says, and that only staff may read it."""

from __future__ import annotations

import re
import urllib.request
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from matchplay import frame_for, live_casual, new_casual
from wsclient import db_state, open_socket

import engine
from matches.clock import liveness, metrics
from matches.clock.deadlines import GRACE_MS
from matches.play import admission, timing

pytestmark = pytest.mark.django_db(transaction=True)


def _value(text: str, name: str, labels: str = "") -> float:
    m = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
    assert m is not None, f"{name}{labels} not in the metrics"
    return float(m.group(1))


def _optional(text: str, name: str, labels: str = "") -> float:
    """A labelled series appears once it is first observed: 0 before."""
    m = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
    return float(m.group(1)) if m is not None else 0.0


def _scrape(user: Any) -> str:
    c = Client()
    c.force_login(user)
    r = c.get("/metrics")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/plain")
    return r.content.decode()


live = live_casual


@pytest.fixture
def staff(db: Any) -> Any:
    from tests.support import make_user

    u = make_user("operator", None)
    u.is_staff = True
    u.save(update_fields=["is_staff"])
    return u


def test_only_staff_may_read_the_metrics(alice: Any, staff: Any) -> None:
    assert Client().get("/metrics").status_code == 404  # anonymous
    c = Client()
    c.force_login(alice)
    r = c.get("/metrics")
    assert r.status_code == 404 and b"sb_moves" not in r.content  # a player
    assert "sb_moves_total" in _scrape(staff)


async def test_moves_sockets_and_the_move_latency_are_counted(
    alice: Any, bob: Any, outsider: Any, staff: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 4
    match = await database_sync_to_async(new_casual)(alice, bob)
    before = await database_sync_to_async(_scrape)(staff)
    a = await open_socket(match.pk, alice)
    b = await open_socket(match.pk, bob)
    w = await open_socket(match.pk, outsider)
    try:
        during = await database_sync_to_async(_scrape)(staff)
        assert _value(during, "sb_sockets", '{kind="match"}') == 2
        assert _value(during, "sb_sockets", '{kind="watch"}') == 1
        await a.send({"op": "start", "version": 0})
        await b.state_at(1)
        await b.send({"op": "start", "version": 1})
        await a.state_at(2)
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        await (a if action.player == 0 else b).send(frame_for(action, 2))
        await a.state_at(3)
    finally:
        for s in (a, b, w):
            await s.comm.disconnect()
    after = await database_sync_to_async(_scrape)(staff)
    assert _value(after, "sb_moves_total") - _value(before, "sb_moves_total") == 3
    count = "sb_move_seconds_count"
    assert _value(after, count) - _value(before, count) == 3
    # Where each of those three frames spent its time, stage by stage, once each.
    for stage in ("taken", "locked", "committed", "built", "handed", "published"):
        label = f'{{stage="{stage}"}}'
        seen = _value(after, "sb_move_stage_seconds_count", label)
        assert seen - _optional(before, "sb_move_stage_seconds_count", label) == 3, stage
    assert _value(after, "sb_sockets", '{kind="match"}') == 0


def test_headroom_refusals_and_credits_are_reported(
    alice: Any, bob: Any, carol: Any, staff: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(admission, "WINDOW_S", 600.0)  # a slow test machine stays saturated
    settings.ADMISSION, settings.ADMISSION_LOOP_LAG_MS = True, 250
    admission.reset()
    before = _scrape(staff)
    admission.note_loop_lag(900)
    admission.note_db_wait(40)
    c = Client()
    c.force_login(carol)
    assert c.post("/api/invites/").status_code == 503
    m = live(alice, bob)
    t0 = 1_900_000_000_000
    liveness.beat(t0, "web-a")
    assert liveness.beat(t0 + 4_000, "web-a") == [m.pk]  # an outage of 4 s, given back
    after = _scrape(staff)
    admission.reset()
    assert _value(after, "sb_saturated") == 1
    assert _value(after, "sb_admission_pressure") == pytest.approx(900 / 250)  # the loop's lag
    refused = '{what="api_invite_create"}'
    was = _value(before, "sb_admission_refusals_total", refused) if refused in before else 0
    assert _value(after, "sb_admission_refusals_total", refused) - was == 1
    lag = _value(after, "sb_loop_lag_seconds_bucket", '{le="1.0"}') - _value(
        before, "sb_loop_lag_seconds_bucket", '{le="1.0"}'
    )
    assert lag == 1 and _value(after, "sb_loop_lag_seconds_bucket", '{le="0.5"}') == _value(
        before, "sb_loop_lag_seconds_bucket", '{le="0.5"}'
    )
    assert _value(after, "sb_db_wait_seconds_count") > _value(before, "sb_db_wait_seconds_count")
    assert _value(after, "sb_outage_credits_total") - _value(before, "sb_outage_credits_total") == 1
    credited = _value(after, "sb_outage_credited_seconds_total") - _value(
        before, "sb_outage_credited_seconds_total"
    )
    assert credited == pytest.approx(4.0)  # a float counter: earlier tests added to it
    assert _value(after, "sb_sweeper_lateness_seconds") == 0


def test_the_sweepers_lateness_is_how_far_past_due_the_oldest_wake_up_is(
    alice: Any, bob: Any
) -> None:
    m = live(alice, bob)
    m.wake_at_ms = timing.now_ms() - GRACE_MS - 7_000  # nobody swept it
    m.save(update_fields=["wake_at_ms"])
    assert 6.9 < metrics.sweeper_lateness_s() < 8.0


def test_a_web_process_serves_its_metrics_on_a_local_port_only() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = metrics.serve_locally(port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            assert b"sb_loop_lag_seconds_bucket" in r.read()
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.shutdown()
        server.server_close()
