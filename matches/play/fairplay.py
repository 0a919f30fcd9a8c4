"""Ratings that mean something, and a cost for ranked no-shows and dodges.

**When a ranked match is rated** (:func:`unrated_reason`, decided in the
transaction that finishes it, just before ``ratings.services.settle_match``
in ``matches.play.act``):

- it was really played: **each player made at least** :func:`min_decisions`
  **(3) decisions of their own** (a placement, a bid, an accept or a decline;
  the server's forced moves and a resignation do not count), **or a hand was
  played to its end**. Otherwise it is unrated with ``too_short``;
- the two players have not already had :func:`pair_limit` **(2) rated matches
  against each other in the last 24 hours** (whichever seats, via the queue or a
  rematch). From the third on the match is unrated with ``pair_limit``; the
  queue pairs them again only when nobody else fits (:func:`spent_pairs`).

A ranked rematch is judged by the same two rules. The reason is stored on the
match (``Match.unrated_reason``) and sent in the view's ``match.result``
(``rated``, ``unrated_reason``); the result card says it in words
(``matches.ui.results``).

**Ranked no-shows** (:func:`record_no_show`, in the transaction that aborts the
match): a ranked match aborted before 開始 is charged to the seat that left
(resigned before 開始) or, at the start window's end, to every seat that had
not pressed 開始. The n-th charge within 24 h starts a queue cooldown of
:data:`COOLDOWN_STEPS` [n-1] from that charge: none for the first (a warning),
then 5 min, 15 min, 1 h, and 3 h from the fifth on. Charges older than 24 h
are forgotten. The lobby shows the cooldown's end; a join meanwhile is refused
with ``cooldown`` and its end time (:func:`cooldown_until`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from matches import conf
from matches.models import Match, MatchEvent, NoShow

DAY = timedelta(hours=24)
DECISIONS = ("place", "bid", "accept", "decline")
COOLDOWN_STEPS = (
    timedelta(0),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=3),
)

TOO_SHORT = "too_short"
PAIR_LIMIT = "pair_limit"
# The result card's sentence for each reason, and the start screen's rule, are
# matches.ui.results' (the UI sees the view's ``unrated_reason``, not this module).


def min_decisions() -> int:
    return conf.rated_min_decisions()


def pair_limit() -> int:
    return conf.rated_pair_limit()


# --- rated or not --------------------------------------------------------------------


def _really_played(m: Match, events: list[dict[str, Any]]) -> bool:
    recorded = MatchEvent.objects.filter(match_id=m.pk, kind__in=(*DECISIONS, "hand_end"))
    seen = list(recorded.values_list("data", flat=True)) + list(events)
    if any(e.get("type") == "hand_end" for e in seen):
        return True
    made = [0, 0]
    for e in seen:
        if e.get("type") in DECISIONS and not e.get("forced") and e.get("player") in (0, 1):
            made[e["player"]] += 1
    return min(made) >= min_decisions()


def rated_between(a: int, b: int, since: datetime, *, exclude: int | None = None) -> int:
    """How many rated matches ``a`` and ``b`` played against each other since ``since``."""
    qs = Match.objects.filter(
        Q(player0_id=a, player1_id=b) | Q(player0_id=b, player1_id=a),
        kind=Match.Kind.RANKED,
        status=Match.Status.FINISHED,
        finished_at__gt=since,
        rating_delta__isnull=False,
    )
    if exclude is not None:
        qs = qs.exclude(pk=exclude)
    return qs.count()


def unrated_reason(m: Match, events: list[dict[str, Any]]) -> str:
    """Why ranked ``m``, finishing now with ``events``, is not rated; ``""``: it is.

    ``events`` are this last change's (not yet recorded) events.
    """
    if m.kind != Match.Kind.RANKED or m.player1_id is None:
        return ""
    if not _really_played(m, events):
        return TOO_SHORT
    if (
        rated_between(m.player0_id, m.player1_id, timezone.now() - DAY, exclude=m.pk)
        >= pair_limit()
    ):
        return PAIR_LIMIT
    return ""


def result_fields(m: Match) -> dict[str, Any]:
    """``rated`` and ``unrated_reason`` for the view's ``match.result`` of an ended match."""
    if m.status == Match.Status.ABORTED:
        return {"rated": False, "unrated_reason": "aborted"}
    if m.status == Match.Status.VOIDED:
        return {"rated": False, "unrated_reason": "void"}
    if m.kind != Match.Kind.RANKED:
        return {"rated": False, "unrated_reason": "casual"}
    if m.rating_delta:
        return {"rated": True, "unrated_reason": None}
    return {"rated": False, "unrated_reason": m.unrated_reason or None}


def spent_pairs(user_ids: list[int], now: datetime | None = None) -> set[frozenset[int]]:
    """The pairs among ``user_ids`` that reached the pair limit in the last 24 h."""
    if len(user_ids) < 2:
        return set()
    since = (now or timezone.now()) - DAY
    rows = Match.objects.filter(
        player0_id__in=user_ids,
        player1_id__in=user_ids,
        kind=Match.Kind.RANKED,
        status=Match.Status.FINISHED,
        finished_at__gt=since,
        rating_delta__isnull=False,
    ).values_list("player0_id", "player1_id")
    counts: dict[frozenset[int], int] = {}
    for a, b in rows:
        key = frozenset((a, b))
        counts[key] = counts.get(key, 0) + 1
    return {k for k, n in counts.items() if n >= pair_limit()}


# --- ranked no-shows -------------------------------------------------------------------


def record_no_show(m: Match, seats: list[int]) -> None:
    """Charge the ``seats`` that left ranked ``m`` before 開始 (inside its abort)."""
    if m.kind != Match.Kind.RANKED:
        return
    users = {m.player0_id if s == 0 else m.player1_id for s in seats}
    NoShow.objects.bulk_create(
        [NoShow(user_id=uid, match_id=m.pk) for uid in sorted(u for u in users if u)],
        ignore_conflicts=True,
    )


def cooldown_until(user: Any, now: datetime | None = None) -> datetime | None:
    """When ``user``'s ranked-queue cooldown ends, if one runs now."""
    now = now or timezone.now()
    charges = list(
        NoShow.objects.filter(user_id=user.pk, at__gt=now - DAY)
        .order_by("at")
        .values_list("at", flat=True)
    )
    if not charges:
        return None
    step = COOLDOWN_STEPS[min(len(charges), len(COOLDOWN_STEPS)) - 1]
    until: datetime = charges[-1] + step
    return until if until > now else None


def charges_of(user: Any, now: datetime | None = None) -> int:
    now = now or timezone.now()
    return NoShow.objects.filter(user_id=user.pk, at__gt=now - DAY).count()


__all__ = [
    "PAIR_LIMIT",
    "TOO_SHORT",
    "cooldown_until",
    "record_no_show",
    "result_fields",
    "spent_pairs",
    "unrated_reason",
]
