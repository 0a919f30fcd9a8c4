"""A player's record for the profile page: matches played, won and lost.

Counted from ``matches.Match`` in one query. Only finished matches between two
accounts count: aborted and voided matches have no result, and a same-device
match (one account at both seats, ``player1`` empty) is practice, not a contest.
A finished match with no winner counts as played, neither won nor lost.

The Match model is looked up through the app registry rather than imported, so
that accounts/ does not depend on matches/ at import time and the profile page
still works (with zeros) where no Match model exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db.models import Count, F, Q


@dataclass(frozen=True)
class Record:
    played: int = 0
    won: int = 0
    lost: int = 0


def record_for(user: Any) -> Record:
    """Return ``user``'s record over finished two-account matches."""
    try:
        Match = apps.get_model("matches", "Match")
    except LookupError:
        return Record()

    at0 = Q(player0=user)
    at1 = Q(player1=user)
    counts = (
        Match.objects.filter(at0 | at1, status="finished", player1__isnull=False)
        .exclude(player0=F("player1"))
        .aggregate(
            played=Count("pk"),
            won=Count("pk", filter=(at0 & Q(winner_seat=0)) | (at1 & Q(winner_seat=1))),
            lost=Count("pk", filter=(at0 & Q(winner_seat=1)) | (at1 & Q(winner_seat=0))),
        )
    )
    return Record(**counts)
