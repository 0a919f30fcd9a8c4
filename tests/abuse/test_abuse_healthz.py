"""``/healthz`` tells anonymous callers only up or down, from an answer cached a moment.

The details (which part is down, how old the last sweep is) go to the staff and
to requests from the machine itself; anyone else's flood of requests runs the
checks at most once per ``ANONYMOUS_CACHE_S``.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from matches import health
from matches.clock import liveness
from tests.support import PASSWORD, make_user

OUTSIDE = "198.51.100.80"

# The checks run on a thread of their own: they see committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_answer() -> None:
    health._Answer.up, health._Answer.until, health._Answer.refreshing = None, 0.0, False


def test_an_anonymous_caller_gets_up_and_nothing_else(db: Any) -> None:
    liveness.worker_beat("vm:1:sweeper")
    r = Client().get("/healthz", REMOTE_ADDR=OUTSIDE)
    assert (r.status_code, r.content) == (200, b"up\n")
    r = Client().get("/healthz", {"format": "json"}, REMOTE_ADDR=OUTSIDE)
    assert (r.status_code, r.json()) == (200, {"status": "up"})


def test_an_anonymous_caller_gets_down_without_the_reason(db: Any, clock: Any) -> None:
    liveness.worker_beat("vm:1:sweeper")
    clock.shift(30)  # the sweeper stopped 30 s ago
    r = Client().get("/healthz", {"format": "json"}, REMOTE_ADDR=OUTSIDE)
    assert (r.status_code, r.json()) == (500, {"status": "down"})
    assert b"sweep" not in r.content.lower()


def test_the_staff_and_the_machine_itself_get_the_details(db: Any, clock: Any) -> None:
    liveness.worker_beat("vm:1:sweeper")
    clock.shift(30)
    local = Client().get("/healthz", {"format": "json"}, REMOTE_ADDR="127.0.0.1")
    assert local.status_code == 500
    assert any("last sweep 30 s ago" in v for v in local.json().values())

    staff = Client()
    staff.force_login(make_user("ops", PASSWORD, is_staff=True))
    r = staff.get("/healthz", {"format": "json"}, REMOTE_ADDR=OUTSIDE)
    assert r.status_code == 500 and any("last sweep" in v for v in r.json().values())

    # A player who is not staff is told no more than anyone.
    player = Client()
    player.force_login(make_user("player", PASSWORD))
    r = player.get("/healthz", {"format": "json"}, REMOTE_ADDR=OUTSIDE)
    assert r.json() == {"status": "down"}


def test_a_forwarded_for_header_does_not_make_a_caller_local(db: Any) -> None:
    liveness.worker_beat("vm:1:sweeper")
    r = Client().get(
        "/healthz", {"format": "json"}, REMOTE_ADDR=OUTSIDE, HTTP_X_FORWARDED_FOR="127.0.0.1"
    )
    assert r.json() == {"status": "up"}


def test_a_flood_of_anonymous_requests_runs_the_checks_once_a_moment(
    db: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    liveness.worker_beat("vm:1:sweeper")
    runs: list[int] = []
    real = health.Sweeper.run

    def counted(self: Any) -> None:
        runs.append(1)
        real(self)

    monkeypatch.setattr(health.Sweeper, "run", counted)
    monkeypatch.setattr(health.time, "monotonic", lambda: now[0])
    now = [1000.0]
    client = Client()
    for _ in range(50):
        assert client.get("/healthz", REMOTE_ADDR=OUTSIDE).content == b"up\n"
    assert len(runs) == 1
    now[0] += health.ANONYMOUS_CACHE_S + 0.1
    client.get("/healthz", REMOTE_ADDR=OUTSIDE)
    assert len(runs) == 2
    # The machine's own monitor is always answered fresh.
    client.get("/healthz", REMOTE_ADDR="127.0.0.1")
    assert len(runs) == 3
