"""Elo ratings: one row per rated player, and one row per player per rated match.

``ratings.services`` is the only writer. A player without a ``PlayerRating`` row
has never finished a rated match: it is rated ``INITIAL_RATING`` with no matches.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .elo import INITIAL_RATING, is_provisional


class PlayerRating(models.Model):
    """A player's current rating. Locked (``select_for_update``) while a match is settled."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="player_rating",
    )
    rating = models.IntegerField(default=INITIAL_RATING)
    rated_matches = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["-rating"], name="ratings_rating_desc")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.rating}{'?' if self.provisional else ''}"

    @property
    def provisional(self) -> bool:
        return is_provisional(self.rated_matches)


class RatingChange(models.Model):
    """What one rated match did to one player's rating. Never updated, never deleted.

    The unique (player, match) constraint is the last line of defence against a
    match being settled twice (``settle_match`` also checks first).
    """

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_changes"
    )
    match = models.ForeignKey(
        "matches.Match", on_delete=models.CASCADE, related_name="rating_changes"
    )
    before = models.IntegerField()
    after = models.IntegerField()
    change = models.IntegerField()
    # The K this player's change used (40 while provisional, then 20).
    k = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["player", "match"], name="ratings_one_change_per_match"
            ),
            models.CheckConstraint(
                condition=models.Q(change=models.F("after") - models.F("before")),
                name="ratings_change_is_after_minus_before",
            ),
        ]
        indexes = [models.Index(fields=["player", "created_at"])]

    def __str__(self) -> str:
        return f"{self.player_id} @ match {self.match_id}: {self.before} → {self.after}"
