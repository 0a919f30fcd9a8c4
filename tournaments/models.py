"""Arenas (issue 19): a time to meet, continuous pairing, live standings, a podium.

``Arena`` is the tournament; ``Entry`` one player's place in it (points, streak,
whether they wait, play, are paused or withdrew); ``Pairing`` one match the arena
made, and what it counted. ``tournaments.services`` is the only writer.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

MIN_MINUTES = 60
MAX_MINUTES = 120


class Arena(models.Model):
    class Origin(models.TextChoices):
        HOURLY = "hourly", _("Hourly arena")
        DAILY = "daily", _("Evening arena")
        STAFF = "staff", _("Created by staff")

    name = models.CharField(max_length=80)
    starts_at = models.DateTimeField(db_index=True)
    minutes = models.PositiveSmallIntegerField(default=60)
    rated = models.BooleanField(default=True)
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.STAFF)
    # Set once the arena's end was processed: final ranks written, podium fixed.
    finished = models.BooleanField(default=False)
    # Bumped whenever the standings change; the push loop sends at most ~1/s.
    # Set once, by the pass that first finds the arena running: its players are told.
    start_announced = models.BooleanField(default=False)
    standings_version = models.PositiveIntegerField(default=0)
    pushed_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["starts_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(minutes__gte=MIN_MINUTES, minutes__lte=MAX_MINUTES),
                name="arena_minutes_60_120",
            ),
            # The schedule makes each hourly or evening arena once, however many run it.
            models.UniqueConstraint(
                fields=["origin", "starts_at"],
                condition=~models.Q(origin="staff"),
                name="arena_scheduled_once",
            ),
        ]

    def __str__(self) -> str:
        return f"Arena {self.pk} {self.name}"

    @property
    def ends_at(self) -> datetime:
        return self.starts_at + timedelta(minutes=self.minutes)

    def display_name(self) -> str:
        """The name shown: a scheduled arena's in the page's language, else as given."""
        if self.origin == self.Origin.STAFF:
            return self.name
        from django.utils.formats import time_format

        local = timezone.localtime(self.starts_at)
        return f"{self.get_origin_display()} {time_format(local, 'H:i')}"

    def phase(self, now: datetime | None = None) -> str:
        """``upcoming``, ``running`` or ``finished`` at ``now``."""
        now = now or timezone.now()
        if self.finished or now >= self.ends_at:
            return "finished"
        return "running" if now >= self.starts_at else "upcoming"


class Entry(models.Model):
    class State(models.TextChoices):
        ACTIVE = "active", _("Taking part")
        PAUSED = "paused", _("Paused")
        WITHDRAWN = "withdrawn", _("Withdrawn")

    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="entries")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="arena_entries"
    )
    # ACTIVE and no current match: waiting for the next pairing pass.
    state = models.CharField(max_length=10, choices=State.choices, default=State.ACTIVE)
    current_match = models.ForeignKey(
        "matches.Match", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    points = models.IntegerField(default=0)
    # Wins in a row (a loss resets it; a void or abort leaves it): from 2 on, wins count double.
    streak = models.PositiveSmallIntegerField(default=0)
    played = models.PositiveSmallIntegerField(default=0)
    wins = models.PositiveSmallIntegerField(default=0)
    rating = models.IntegerField(default=1500)  # at join: the table's tie-break and display
    last_opponent = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The arena page's socket (or a bot's API call) was last seen then; absent
    # longer than the grace period, a waiting player is paused.
    last_seen = models.DateTimeField(default=timezone.now)
    joined_at = models.DateTimeField(default=timezone.now)
    # Not paired again before this (a few seconds after a match ends): time to see
    # the result and be back on the arena page for the next pairing.
    free_at = models.DateTimeField(null=True, blank=True)
    final_rank = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-points", "-rating", "joined_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["arena", "user"], name="arena_entry_once"),
        ]

    def __str__(self) -> str:
        return f"Entry {self.user_id} in {self.arena_id}"


class Pairing(models.Model):
    arena = models.ForeignKey(Arena, on_delete=models.CASCADE, related_name="pairings")
    match = models.OneToOneField(
        "matches.Match", on_delete=models.CASCADE, related_name="arena_pairing"
    )
    # The seats' users, as in the match (player0, player1).
    user0 = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    user1 = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    berserk = models.JSONField(default=list)  # [bool, bool]: who went berserk at 開始
    # Set once the match's end reached the arena: counted (points given) or not.
    settled = models.BooleanField(default=False, db_index=True)
    counted = models.BooleanField(default=False)
    points = models.JSONField(default=list)  # [p0, p1] as given
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Pairing {self.match_id} in {self.arena_id}"
