"""``GET /healthz``: the database, Redis, the Celery worker and the deadline sweeper.

Anonymous (a load balancer or a monitor asks it), JSON on request, 200 when
everything is up and 500 naming the part that is not — and never a host name,
port or password.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from matches.clock import liveness

# The checks run on a thread of their own: they see committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


def _health(client: Client) -> tuple[int, dict[str, str]]:
    r = client.get("/healthz", {"format": "json"})
    return r.status_code, r.json()


def test_healthz_is_ok_when_the_database_answers_and_the_sweeper_swept(client: Client) -> None:
    liveness.worker_beat("vm:1:sweeper")
    status, body = _health(client)
    assert status == 200, body
    assert set(body.values()) == {"OK"}
    assert any("Database" in k for k in body) and any("Sweeper" in k for k in body)


def test_healthz_fails_when_no_sweep_ran_lately(client: Client, clock: Any) -> None:
    liveness.worker_beat("vm:1:sweeper")
    clock.shift(30)
    status, body = _health(client)
    assert status == 500
    (sweeper,) = [v for k, v in body.items() if "Sweeper" in k]
    assert "last sweep 30 s ago" in sweeper


def test_healthz_names_redis_when_it_does_not_answer(client: Client, settings: Any) -> None:
    settings.REDIS_URL = "redis://:secret@127.0.0.1:1/0"
    liveness.worker_beat("vm:1:sweeper")
    r = client.get("/healthz", {"format": "json"})
    assert r.status_code == 500
    (redis_line,) = [v for k, v in r.json().items() if "Redis" in k]
    assert redis_line.endswith("Redis does not answer")
    assert b"secret" not in r.content and b"127.0.0.1" not in r.content
