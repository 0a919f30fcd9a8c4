"""Log-in lockout (django-axes): the client's address, and the page a locked-out person sees.

The rules are in settings (``AXES_*``): after ``AXES_FAILURE_LIMIT`` failed
log-ins for one username, or separately from one IP address, further attempts
for it are refused for ``AXES_COOLOFF_TIME`` — the right password included, and
without hashing it, so a flood costs no CPU. Failures older than the cool-off
no longer count; a success does not wipe them (else logging in to one's own
account between guesses would reset the counter of the address).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from axes.helpers import (
    get_client_parameters,
    get_client_username,
    get_cool_off,
    get_failure_limit,
)
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
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


def lockout_ends_at(request: HttpRequest, credentials: dict[str, Any] | None) -> datetime | None:
    """When the lockout that refused ``request`` ends, or None if it is not locked out.

    Each lockout parameter (the username; the address) counts the failures of
    its attempt records still inside the cool-off. Walking them newest first,
    the record that brings the count to the limit is the one whose expiry lifts
    the lock; the latest such expiry over the parameters is when both allow a try.
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
        failures = 0
        for attempt_time, count in rows:
            failures += count
            if failures >= limit:
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
