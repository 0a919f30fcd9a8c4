"""What one account, one socket and one match may spend: every limit answers clearly.

Each limit refuses with a stable code and changes nothing else (docs/protocol.md
§ "Limits"; README "Abuse and limits"). The numbers are settings, so a
deployment (or a test) can move them.

**Created per user and hour** (:func:`check_hourly`), counted in the database
under the player's row lock (``services.lock_users``), so two requests at once
cannot both slip under the limit: invites made (``INVITES_PER_HOUR``, 30),
same-device matches (``SAME_DEVICE_PER_HOUR``, 30) and matches against the
computer (``COMPUTER_MATCHES_PER_HOUR``, 30). Over it: ``rate_limited`` (HTTP
429) with ``retry_at``, when the oldest of the hour's creations leaves the window.

**Ranked queue joins per user and minute** (:func:`check_queue_join`,
``QUEUE_JOINS_PER_MINUTE``, 10): django-ratelimit in the shared ``ratelimit``
cache (Redis when there is one). A join-and-leave loop would otherwise make
every pairing pass lock the queue for nothing.

**Frames per socket** (:class:`FrameBudget`): a token bucket of
``SOCKET_FRAME_BURST`` (20) frames, refilled at ``SOCKET_FRAMES_PER_S`` (5) a
second. A frame over it is not read: the socket gets a ``rate_limited`` error.
A socket that sends :data:`CLOSE_AFTER_REFUSED` (20) more frames without the
bucket refilling by one is closed with :data:`CLOSE_FLOOD` (4429).

**Sockets per user** (``SOCKETS_PER_USER``, 30) and **spectators per match**
(``SPECTATORS_PER_MATCH``, 200): counted per web process (each process holds its
own sockets; behind the proxy a client's sockets spread over the processes, so
the whole site allows that many per process). A socket over either is accepted
and closed with :data:`CLOSE_TOO_MANY_SOCKETS` (4430) or
:data:`CLOSE_TOO_MANY_SPECTATORS` (4431).
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from .models import Invite, Match
from .services import ServiceError

CLOSE_FLOOD = 4429
CLOSE_TOO_MANY_SOCKETS = 4430
CLOSE_TOO_MANY_SPECTATORS = 4431
CLOSE_AFTER_REFUSED = 20
HOUR = timedelta(hours=1)

DEFAULTS = {
    "INVITES_PER_HOUR": 30,
    "SAME_DEVICE_PER_HOUR": 30,
    "COMPUTER_MATCHES_PER_HOUR": 30,
    "QUEUE_JOINS_PER_MINUTE": 10,
    "SOCKET_FRAME_BURST": 20,
    "SOCKET_FRAMES_PER_S": 5,
    "SOCKETS_PER_USER": 30,
    "SPECTATORS_PER_MATCH": 200,
}


def limit(name: str) -> int:
    return int(getattr(settings, name, DEFAULTS[name]))


class Limited(ServiceError):
    """A budget is spent (``rate_limited``; a queue ``cooldown``), and ``retry_at``
    (epoch ms): when it is not any more."""

    def __init__(self, message: str, retry_at_ms: int, code: str = "rate_limited") -> None:
        super().__init__(code, message)
        self.retry_at = retry_at_ms


def _ms(dt: Any) -> int:
    return int(dt.timestamp() * 1000)


# --- per user and hour ------------------------------------------------------------


def _created_this_hour(user: Any, what: str, since: Any) -> Any:
    if what == "invite":
        return Invite.objects.filter(creator_id=user.pk, created_at__gt=since)
    if what == "same_device":
        return Match.objects.filter(
            kind=Match.Kind.SAME_DEVICE, player0_id=user.pk, created_at__gt=since
        )
    return Match.objects.filter(
        Q(player0_id=user.pk) | Q(player1_id=user.pk),
        computer_seat__isnull=False,
        created_at__gt=since,
    )


_HOURLY = {
    "invite": "INVITES_PER_HOUR",
    "same_device": "SAME_DEVICE_PER_HOUR",
    "computer": "COMPUTER_MATCHES_PER_HOUR",
}


def check_hourly(user: Any, what: str) -> None:
    """Refuse a new ``what`` (``invite``, ``same_device``, ``computer``) over its hourly
    budget. Call with the user's row lock held, before creating anything."""
    most = limit(_HOURLY[what])
    since = timezone.now() - HOUR
    made = list(
        _created_this_hour(user, what, since)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:most]
    )
    if len(made) < most:
        return
    retry = made[-1] + HOUR  # the oldest counted one leaves the window then
    messages = {
        "invite": _("You made %(n)d invites in the last hour: try again at %(at)s."),
        "same_device": _(
            "You made %(n)d same-device matches in the last hour: try again at %(at)s."
        ),
        "computer": _(
            "You started %(n)d matches against the computer in the last hour: try again at %(at)s."
        ),
    }
    at = timezone.localtime(retry).strftime("%H:%M")
    raise Limited(messages[what] % {"n": most, "at": at}, _ms(retry))


# --- queue joins per user and minute ----------------------------------------------------


def check_queue_join(user: Any) -> None:
    """Count one ranked-queue join of ``user``; refuse it over ``QUEUE_JOINS_PER_MINUTE``."""
    from django_ratelimit.core import get_usage

    rate = f"{limit('QUEUE_JOINS_PER_MINUTE')}/m"
    try:
        usage = get_usage(
            None,
            group="sb-queue-join",
            key=lambda _g, _r: str(user.pk),
            rate=rate,
            increment=True,
        )
    except Exception:
        return  # the cache is down: a brake, not a wall (as accounts.tokens.over_limit)
    if usage and usage["should_limit"]:
        retry = int(time.time() * 1000) + int(usage["time_left"]) * 1000
        raise Limited(
            _("You joined the queue too often: wait %(s)d s and try again.")
            % {"s": max(1, int(usage["time_left"]))},
            retry,
        )


# --- frames per socket -------------------------------------------------------------


class FrameBudget:
    """A token bucket for one socket's frames (module docstring)."""

    def __init__(self) -> None:
        self.burst = float(limit("SOCKET_FRAME_BURST"))
        self.rate = float(limit("SOCKET_FRAMES_PER_S"))
        self.tokens = self.burst
        self.at = time.monotonic()
        self.refused = 0

    def judge(self) -> str:
        """``"ok"`` (read the frame), ``"refuse"`` (answer ``rate_limited``) or ``"close"``."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.refused = 0
            return "ok"
        self.refused += 1
        return "close" if self.refused > CLOSE_AFTER_REFUSED else "refuse"


# Translated where it is sent (the socket's language).
FLOOD_MESSAGE = gettext_noop("Too many frames: slow down.")


# --- sockets per user, spectators per match (this process) -----------------------------

_sockets: Counter[int] = Counter()
_spectators: Counter[int] = Counter()


def open_socket(user_id: int, *, watching_match: int | None = None) -> int | None:
    """Count a new socket of ``user_id`` (a spectator of ``watching_match``); ``None`` if
    it fits, else the close code that refuses it. Pair with :func:`close_socket`."""
    if _sockets[user_id] >= limit("SOCKETS_PER_USER"):
        return CLOSE_TOO_MANY_SOCKETS
    if watching_match is not None and _spectators[watching_match] >= limit("SPECTATORS_PER_MATCH"):
        return CLOSE_TOO_MANY_SPECTATORS
    _sockets[user_id] += 1
    if watching_match is not None:
        _spectators[watching_match] += 1
    return None


def close_socket(user_id: int, *, watching_match: int | None = None) -> None:
    for counter, key in ((_sockets, user_id), (_spectators, watching_match)):
        if key is None:
            continue
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]


def spectators_of(match_id: int) -> int:
    return _spectators[match_id]
