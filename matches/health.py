"""``GET /healthz``: is the platform able to run matches? (django-health-check)

One line per part, ``OK`` or what is wrong; HTTP 500 if any part is down:

- ``Database``: a ``SELECT 1``;
- ``Redis`` (with ``REDIS_URL``): a ping of the channel layer's Redis;
- ``Worker`` (with the Celery sweeper): a Celery worker answers a ping;
- ``Sweeper``: the deadline sweeper's last pass (``matches.clock.sweeper``'s
  heartbeat, once a second) is at most :data:`SWEEP_STALE_S` old.

The web process answering proves the web tier. Nothing here names a host, a
port or a password.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from health_check.base import HealthCheck
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

from matches import conf

SWEEP_STALE_S = 5.0


@dataclasses.dataclass
class Redis(HealthCheck):
    """A ping of ``REDIS_URL`` (the channel layer and the Celery broker)."""

    timeout = datetime.timedelta(seconds=2)

    def run(self) -> None:
        import redis

        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
        )
        try:
            client.ping()
        except redis.RedisError as e:
            raise ServiceUnavailable("Redis does not answer") from e
        finally:
            client.close()


@dataclasses.dataclass
class Sweeper(HealthCheck):
    """The deadline sweeper has made a pass in the last few seconds."""

    def run(self) -> None:
        from .models import Heartbeat

        try:
            last = (
                Heartbeat.objects.filter(kind=Heartbeat.Kind.WORKER)
                .order_by("-last_beat")
                .values_list("last_beat", flat=True)
                .first()
            )
        finally:
            # A check runs on a pool thread: its connection goes back to the pool.
            close_old_connections()
        if last is None:
            raise ServiceUnavailable("no sweep yet")
        age = (timezone.now() - last).total_seconds()
        if age > SWEEP_STALE_S:
            raise ServiceUnavailable(f"last sweep {age:.0f} s ago")

    def pretty_status(self) -> str:
        return "OK"


class HealthView(HealthCheckView):
    def get_checks(self) -> Any:
        yield from super().get_checks()
        if conf.redis_url():
            yield Redis()
        if conf.sweeper() == "celery":
            from health_check.contrib.celery import Ping

            from config.celery import app

            yield Ping(app=app, limit=1)
        yield Sweeper()

    checks = ("health_check.checks.Database",)
