"""Log-in lockout (django-axes): who is locked, the client's address, and the lockout page.

The rules are in settings (``AXES_*``, ``LOGIN_ADDRESS_FAILURE_LIMIT``):

- ``AXES_FAILURE_LIMIT`` (10) failed log-ins for one username **from one
  address** lock that pair: that address can no longer try that name. The
  name's owner, from any other address, still logs in: usernames are public
  (the leaderboard), so a lock on the name alone would let anyone lock anyone
  out, again and again.
- ``LOGIN_ADDRESS_FAILURE_LIMIT`` (50) failures from one address, whatever the
  names, lock the address: a guesser cannot get round the pair's limit by
  trying many names.

A locked attempt is refused for ``AXES_COOLOFF_TIME`` — the right password
included, and without hashing it, so a flood costs no CPU. Failures older than
the cool-off no longer count; a success does not wipe them (else logging in to
one's own account between guesses would reset the counter of the address).
Before any lock, the password throttle (``config.throttle``) already slows an
address that keeps failing to one answer a second per connection.

Axes has one failure limit for all its lockout parameters; :class:`Handler`
gives each parameter its own (:func:`parameter_limit`).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import (
    get_client_parameters,
    get_client_username,
    get_cool_off,
    get_failure_limit,
)
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from config.throttle import forwarded_address

from .views import safe_next


def client_ip(request: HttpRequest) -> str:
    """The address a log-in comes from (``AXES_CLIENT_IP_CALLABLE``).

    ``REMOTE_ADDR`` unless ``TRUSTED_PROXY_COUNT`` says how many proxies of ours
    stand in front of Daphne (:func:`config.throttle.forwarded_address`).
    """
    return forwarded_address(
        str(request.META.get("REMOTE_ADDR", "")),
        str(request.META.get("HTTP_X_FORWARDED_FOR", "")),
        int(getattr(settings, "TRUSTED_PROXY_COUNT", 0)),
    )


def parameter_limit(lookup: dict[str, Any], pair_limit: int) -> int:
    """The failure limit of one lockout parameter (``lookup``: its filter on the attempts).

    The address alone has ``LOGIN_ADDRESS_FAILURE_LIMIT``; every other
    parameter (the (username, address) pair) has axes' own limit.
    """
    if set(lookup) == {"ip_address"}:
        return int(getattr(settings, "LOGIN_ADDRESS_FAILURE_LIMIT", pair_limit))
    return pair_limit


class Handler(AxesDatabaseHandler):  # type: ignore[misc]
    """Axes' database handler, with a failure limit per lockout parameter (``AXES_HANDLER``).

    Axes locks when ``get_failures() >= AXES_FAILURE_LIMIT``. So the failures
    of each parameter are scaled to that limit, ``failures * L // limit`` (which
    reaches ``L`` exactly when ``failures`` reaches ``limit``), and the highest
    is returned.
    """

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        pair_limit = get_failure_limit(request, credentials)
        username = get_client_username(request, credentials)
        lookups = get_client_parameters(
            username, request.axes_ip_address, request.axes_user_agent, request, credentials
        )
        scaled = 0
        for lookup, attempts in zip(
            lookups, self.get_user_attempts(request, credentials), strict=True
        ):
            failures = attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            scaled = max(scaled, failures * pair_limit // parameter_limit(lookup, pair_limit))
        return scaled


def lockout_ends_at(request: HttpRequest, credentials: dict[str, Any] | None) -> datetime | None:
    """When the lockout that refused ``request`` ends, or None if it is not locked out.

    Each lockout parameter (the username and address pair; the address) counts
    the failures of its attempt records still inside the cool-off. Walking them
    newest first, the record that brings the count to the parameter's limit is
    the one whose expiry lifts the lock; the latest such expiry over the
    parameters is when all of them allow a try.
    """
    cool_off = get_cool_off(request)
    if cool_off is None:
        return None
    limit = get_failure_limit(request, credentials)
    now = timezone.now()
    username = get_client_username(request, credentials)
    ends: list[datetime] = []
    for lookup in get_client_parameters(
        username, request.axes_ip_address, request.axes_user_agent, request, credentials
    ):
        rows = (
            AccessAttempt.objects.filter(**lookup, attempt_time__gte=now - cool_off)
            .order_by("-attempt_time")
            .values_list("attempt_time", "failures_since_start")
        )
        failures, own_limit = 0, parameter_limit(lookup, limit)
        for attempt_time, count in rows:
            failures += count
            if failures >= own_limit:
                ends.append(attempt_time + cool_off)
                break
    return max(ends, default=None)


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The log-in page again, saying the account or address is locked and until when.

    ``AXES_LOCKOUT_CALLABLE``. Axes passes its arguments differently in its sync
    and async middleware, so everything is read from the request itself.
    """
    creds = getattr(request, "axes_credentials", None)
    username = get_client_username(request, creds) or ""
    until = lockout_ends_at(request, creds)
    if until is None:  # expired between the refusal and now: say the cool-off
        until = timezone.now() + (get_cool_off(request) or settings.AXES_COOLOFF_TIME)
    minutes = max(1, math.ceil((until - timezone.now()).total_seconds() / 60))
    until = timezone.localtime(until)
    context = {
        "form": AuthenticationForm(request, initial={"username": username}),
        "next": safe_next(request),
        "lockout": {"time": until.strftime("%H:%M"), "iso": until.isoformat(), "minutes": minutes},
    }
    return render(
        request, "registration/login.html", context, status=settings.AXES_HTTP_RESPONSE_CODE
    )
