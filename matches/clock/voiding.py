"""Voiding after a service fault (RULES §8): by staff, from the admin.

Outages of the web tier are found and given back to the players automatically
(``matches.liveness``: the clocks are credited, so nobody pays for our
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

from collections.abc import Iterable

from matches.play.act import VOID_OUTAGE, VOID_STAFF, void_match

__all__ = ["VOID_OUTAGE", "VOID_STAFF", "void", "void_match"]


def void(match_ids: Iterable[int], reason: str = VOID_STAFF) -> list[int]:
    """Void the live matches among ``match_ids``; returns the ids voided now."""
    return [pk for pk in sorted(set(match_ids)) if void_match(pk, reason)]
