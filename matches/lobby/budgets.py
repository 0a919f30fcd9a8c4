"""What one account may create: every limit answers clearly and changes nothing else.

Each limit refuses with a stable code (docs/protocol.md § "Limits"; README
"Abuse and limits"). The numbers are settings (``matches.conf``), so a
deployment (or a test) can move them. The socket budgets (frames, sockets per
user, spectators per match) are ``matches.realtime.budgets``.

**Created per user and hour** (:func:`check_hourly`), counted in the database
under the player's row lock (``seating.lock_users``), so two requests at once
cannot both slip under the limit: invites made (``INVITES_PER_HOUR``, 30),
same-device matches (``SAME_DEVICE_PER_HOUR``, 30) and matches against the
computer (``COMPUTER_MATCHES_PER_HOUR``, 30). Over it: ``rate_limited`` (HTTP
429) with ``retry_at``, when the oldest of the hour's creations leaves the window.

**Ranked queue joins per user and minute** (:func:`check_queue_join`,
``QUEUE_JOINS_PER_MINUTE``, 10): django-ratelimit in the shared ``ratelimit``
cache (Redis when there is one). A join-and-leave loop would otherwise make
every pairing pass lock the queue for nothing.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from matches import conf
from matches.models import Invite, Match
from matches.play.errors import ServiceError

HOUR = timedelta(hours=1)


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


def check_hourly(user: Any, what: str) -> None:
    """Refuse a new ``what`` (``invite``, ``same_device``, ``computer``) over its hourly
    budget. Call with the user's row lock held, before creating anything."""
    most = conf.per_hour(what)
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

    rate = f"{conf.queue_joins_per_minute()}/m"
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
