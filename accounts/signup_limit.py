"""Sign-ups per address: ``settings.SIGNUP_RATE`` new accounts per address (django-ratelimit).

Every account costs a PBKDF2 hash on the one hashing thread, and every per-user
limit (invites, open matches) is only worth as much as an account is hard to
make. So a client address may create ``SIGNUP_RATE`` accounts ("10/h") and is
then answered 429, with the sign-up page saying for how long, before anything is
validated, hashed or created.

- **What counts**: an account actually created. A form refused for its own
  faults (a weak password, a taken name) costs no hash and is not counted, so
  a person who mistypes is not locked out by their own typos.
- **The address**: the client's address as the log-in lockout reads it
  (``config.throttle.forwarded_address``: ``REMOTE_ADDR``, or behind
  ``TRUSTED_PROXY_COUNT`` proxies of ours the address they saw). An IPv6
  address counts as its /64 network, because one household or one server is
  given a whole /64 and can pick any address in it.
- **Where it is counted**: the ``ratelimit`` cache, Redis when there is one, so
  every web process counts the same sign-ups. If that cache does not answer
  the sign-up goes through (a limit is a brake; sign-up must not fail with it).
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from config.throttle import forwarded_address

log = logging.getLogger(__name__)

GROUP = "signup"


def rate() -> str:
    return str(getattr(settings, "SIGNUP_RATE", "10/h"))


def address_key(group: str, request: HttpRequest) -> str:
    """The address a sign-up is counted against: IPv4 as is, IPv6 by its /64."""
    raw = forwarded_address(
        str(request.META.get("REMOTE_ADDR", "")),
        str(request.META.get("HTTP_X_FORWARDED_FOR", "")),
        int(getattr(settings, "TRUSTED_PROXY_COUNT", 0)),
    )
    try:
        ip = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _usage(request: HttpRequest, *, increment: bool) -> dict[str, Any] | None:
    try:
        usage: dict[str, Any] | None = get_usage(
            request, group=GROUP, key=address_key, rate=rate(), increment=increment
        )
        return usage
    except Exception:
        log.warning("the rate-limit cache does not answer; sign-up not counted")
        return None


def seconds_left(request: HttpRequest) -> int | None:
    """Seconds until this address may sign up again, or None if it may now.

    Only reads the count (the page and a refused form cost nothing).
    """
    usage = _usage(request, increment=False)
    if usage is None or usage["count"] < usage["limit"]:
        return None
    return max(1, int(usage["time_left"]))


def take(request: HttpRequest) -> int | None:
    """Count one sign-up about to be created; seconds to wait instead if over the limit."""
    usage = _usage(request, increment=True)
    if usage is None or usage["count"] <= usage["limit"]:
        return None
    return max(1, int(usage["time_left"]))
