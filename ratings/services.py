"""Settling rated matches, and ratings for display. The only writer of ``ratings`` rows.

``settle_match`` runs inside the transaction that finishes the match
(``matches.play.act.finish_if_over`` calls it), so a match is never finished
without its rating change nor rated without being finished: a crash rolls
back both. Only ranked matches between two accounts that end by balance, time
or resign are rated; aborted and voided matches never are (RULES §1, §8); nor is a
ranked match that ``matches.play.fairplay`` found too short or one pairing too many
(``match.unrated_reason``, set just before this runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from .elo import INITIAL_RATING, is_provisional, k_factor, rating_changes
from .models import PlayerRating, RatingChange

RATED_ENDS = ("balance", "time", "resign")


def is_rated(match: Any) -> bool:
    """Whether ``match`` (as it stands in memory) changes ratings."""
    return (
        match.kind == "ranked"
        and match.status == "finished"
        and match.end_reason in RATED_ENDS
        and match.winner_seat in (0, 1)
        and match.player1_id is not None
        and match.player0_id != match.player1_id
        and not getattr(match, "unrated_reason", "")
    )


def settle_match(match: Any) -> list[RatingChange]:
    """Apply ``match``'s result to both players' ratings; return the two changes.

    Must be called inside the transaction that finishes the match. Returns ``[]``
    for a match that is not rated. Idempotent: a match already settled returns
    its stored changes and changes nothing.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("settle_match must run inside the transaction that ends the match")
    if not is_rated(match):
        return []
    ids = sorted((match.player0_id, match.player1_id))
    # Rows are created first (a no-op when they exist) so that both can be locked.
    # Locks are always taken in user-id order: two matches settling at once with
    # the same two players (or a chain of players) can then never deadlock.
    PlayerRating.objects.bulk_create(
        [PlayerRating(user_id=uid) for uid in ids], ignore_conflicts=True
    )
    locked = {
        r.user_id: r
        for r in PlayerRating.objects.select_for_update()
        .filter(user_id__in=ids)
        .order_by("user_id")
    }
    # Checked under the locks: a second settle of the same match waits for the
    # first to commit and then finds its changes.
    existing = list(RatingChange.objects.filter(match_id=match.pk).order_by("id"))
    if existing:
        return existing
    r0, r1 = locked[match.player0_id], locked[match.player1_id]
    score0 = 1.0 if match.winner_seat == 0 else 0.0
    k0, k1 = k_factor(r0.rated_matches), k_factor(r1.rated_matches)
    d0, d1 = rating_changes(r0.rating, r1.rating, score0, k0, k1)
    now = timezone.now()
    changes = []
    for row, delta, k in ((r0, d0, k0), (r1, d1, k1)):
        before = row.rating
        row.rating = before + delta
        row.rated_matches += 1
        row.updated_at = now
        row.save(update_fields=["rating", "rated_matches", "updated_at"])
        changes.append(
            RatingChange(
                player_id=row.user_id,
                match_id=match.pk,
                before=before,
                after=row.rating,
                change=delta,
                k=k,
                created_at=now,
            )
        )
    return RatingChange.objects.bulk_create(changes)


@dataclass(frozen=True)
class Rating:
    """A rating for display: ``str()`` gives ``1520`` or ``1520?`` while provisional."""

    value: int = INITIAL_RATING
    rated_matches: int = 0

    @property
    def provisional(self) -> bool:
        return is_provisional(self.rated_matches)

    @property
    def display(self) -> str:
        return f"{self.value}?" if self.provisional else str(self.value)

    def __str__(self) -> str:
        return self.display


def rating_of(user: Any) -> Rating:
    """``user``'s rating for display (1500? for someone who never played a rated match)."""
    row = PlayerRating.objects.filter(user_id=user.pk).first()
    if row is None:
        return Rating()
    return Rating(row.rating, row.rated_matches)


def ratings_of(user_ids: Sequence[int]) -> dict[int, Rating]:
    """:func:`rating_of` for many players at once (one query), by user id."""
    rows = {
        uid: Rating(r, n)
        for uid, r, n in PlayerRating.objects.filter(user_id__in=list(user_ids)).values_list(
            "user_id", "rating", "rated_matches"
        )
    }
    return {uid: rows.get(uid, Rating()) for uid in user_ids}
