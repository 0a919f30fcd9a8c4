"""Voiding after a service fault (RULES §8): by staff, from the admin.

Outages of the web tier are found and given back to the players automatically
(``matches.clock.liveness``: the clocks are credited, so nobody pays for our
outage, and only an outage of more than three minutes voids a live match).
What is left for people is the case no heartbeat can see: staff who know that
a match's timing was unreliable void it from the admin (``Match`` → "Void
after a service fault"). A voided match has status ``voided``, ``end_reason``
``void`` and a ``void_reason`` (an English source string, translated when
shown); it has no winner and no rating change (ratings settle only finished
matches). Every audience gets the new view at once. Only live matches can be
voided: a match that is over stays as it ended.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

import engine
from matches.models import Match
from matches.play import timing
from matches.play.audience import Change
from matches.play.store import locked_match, save_change

log = logging.getLogger(__name__)

# Stored in void_reason (English source text); templates translate it when shown.
VOID_OUTAGE = gettext_noop(
    "The server was unreachable for more than three minutes while this match was being "
    "played, so the match is void. Ratings are unchanged."
)


VOID_STAFF = gettext_noop("Staff voided this match after a service fault. Ratings are unchanged.")


def void_locked(m: Match, state: engine.MatchState | None, reason: str, now: int) -> Change:
    """Void the locked live match ``m``: no winner, no rating change, every audience told."""
    m.status = Match.Status.VOIDED
    m.end_reason = "void"
    m.winner_seat = None
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    m.void_reason = m.void_reason or reason
    change = save_change(m, state, [{"type": "voided", "reason": m.void_reason, "t": now}])
    log.warning("match %s voided: %s", m.pk, m.void_reason)
    return change


def void_match(match_id: int, reason: str = VOID_STAFF) -> bool:
    """Void one live match (idempotent); whether it was voided now."""
    with transaction.atomic():
        m = locked_match(match_id)
        if m is None or m.status != Match.Status.LIVE:
            return False
        state = engine.from_dict(m.state) if m.state is not None else None
        void_locked(m, state, reason, timing.now_ms())
        return True


def void(match_ids: Iterable[int], reason: str = VOID_STAFF) -> list[int]:
    """Void the live matches among ``match_ids``; returns the ids voided now."""
    return [pk for pk in sorted(set(match_ids)) if void_match(pk, reason)]
