"""``GET /healthz``: is the platform able to run matches? (django-health-check)

One line per part, ``OK`` or what is wrong; HTTP 500 if any part is down:

- ``Database``: a ``SELECT 1``;
- ``Redis`` (with ``REDIS_URL``): a ping of the channel layer's Redis;
- ``Worker`` (with the Celery sweeper): a Celery worker answers a ping;
- ``Sweeper``: the deadline sweeper's last pass (``matches.clock.sweeper``'s
  heartbeat, once a second) is at most :data:`SWEEP_STALE_S` old.

The web process answering proves the web tier. Nothing here names a host, a
port or a password.

**Who sees what.** Those lines go to the staff (logged in) and to requests from
the machine itself (a loopback address, read as the log-in lockout reads
addresses: ``config.throttle.forwarded_address``), where the monitors run.
Anyone else gets ``up`` or ``down`` alone (``{"status": "up"}`` as JSON), same
status codes, from an answer at most :data:`ANONYMOUS_CACHE_S` old: the
internal state is nobody else's business, and an anonymous flood must not run a
database query, a Redis ping and a Celery round trip per request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import ipaddress
import time
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from health_check.base import HealthCheck
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

from matches import conf

SWEEP_STALE_S = 5.0
ANONYMOUS_CACHE_S = 1.5


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


def _is_local(request: HttpRequest) -> bool:
    from config.throttle import forwarded_address

    address = forwarded_address(
        str(request.META.get("REMOTE_ADDR", "")),
        str(request.META.get("HTTP_X_FORWARDED_FOR", "")),
        int(getattr(settings, "TRUSTED_PROXY_COUNT", 0)),
    )
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class _Answer:
    """The last up/down answer given to anonymous callers, in this process."""

    up: bool | None = None
    until = 0.0  # time.monotonic() until which it stands
    refreshing = False


class HealthView(HealthCheckView):
    async def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if _is_local(request) or getattr(await request.auser(), "is_staff", False):
            response: HttpResponse = await super().get(request, *args, **kwargs)
            # django-health-check's HTML page styles itself with a <style> element.
            response._csp_update = {"style-src": ["'unsafe-inline'"]}  # type: ignore[attr-defined]
            return response
        now = time.monotonic()
        # While one request refreshes the answer, the others get the last one.
        if _Answer.up is None or (now >= _Answer.until and not _Answer.refreshing):
            _Answer.refreshing = True
            try:
                with self.get_executor() as executor:
                    results = await asyncio.gather(
                        *(check.get_result(executor) for check in self.get_checks())
                    )
                _Answer.up = not any(r.error for r in results)
                _Answer.until = time.monotonic() + ANONYMOUS_CACHE_S
            finally:
                _Answer.refreshing = False
        word, status = ("up", 200) if _Answer.up else ("down", 500)
        wants_json = request.GET.get("format") == "json" or "json" in request.headers.get(
            "accept", ""
        )
        if wants_json:
            return JsonResponse({"status": word}, status=status)
        return HttpResponse(word + "\n", content_type="text/plain; charset=utf-8", status=status)

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
