"""Matches, their append-only event log, and casual invites.

The ``Match`` row is the truth about a live match: the engine state as JSON
plus a ``version`` that every change bumps. ``matches/play/`` is the only
writer; it locks the row (``select_for_update``) for every change so that two
frames, a timer and a worker can never interleave.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

INVITE_TTL = timedelta(hours=24)


def _not_ready() -> list[bool]:
    return [False, False]


def _invite_code() -> str:
    # URL-safe, and never starting with "-": a code is passed on command lines too
    # (examples/bot.py accept CODE), where a leading dash reads as an option.
    while True:
        code = secrets.token_urlsafe(9)
        if code[0] != "-":
            return code


class Match(models.Model):
    class Kind(models.TextChoices):
        RANKED = "ranked", _("Ranked")
        CASUAL = "casual", _("Casual")
        SAME_DEVICE = "same_device", _("Same device")

    class Status(models.TextChoices):
        WAITING = "waiting", _("Waiting for start")
        LIVE = "live", _("Live")
        FINISHED = "finished", _("Finished")
        ABORTED = "aborted", _("Aborted")
        VOIDED = "voided", _("Voided")

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.WAITING, db_index=True
    )
    player0 = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="matches_as_seat0"
    )
    # Null in same-device play: the second seat is a guest at the same device.
    player1 = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="matches_as_seat1",
        null=True,
        blank=True,
    )
    guest_name = models.CharField(max_length=40, blank=True)
    state = models.JSONField(null=True, blank=True)
    version = models.PositiveIntegerField(default=0)
    # Who pressed 開始 (while waiting) or 次へ (between hands).
    ready = models.JSONField(default=_not_ready)
    # Epoch ms: when waiting is aborted, or the next hand starts by itself.
    ready_deadline_ms = models.BigIntegerField(null=True, blank=True)
    # Epoch ms: when the sweeper must look at this match if nobody acts (a clock
    # running out, a start or continue window closing); null once nothing is due.
    wake_at_ms = models.BigIntegerField(null=True, blank=True)
    # A committed change whose push failed (the channel layer was down): the
    # sweeper pushes the match again.
    needs_push = models.BooleanField(default=False)
    winner_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    end_reason = models.CharField(max_length=16, blank=True)
    void_reason = models.CharField(max_length=200, blank=True)
    # Each seat's rating when the match was made, ``{"value", "display"}`` (a guest
    # seat: null), and each seat's rating change once a ranked match is settled.
    # Kept on the row so that a move's views need no rating query.
    player_ratings = models.JSONField(default=list, blank=True)
    # The seats' names as shown (usernames, or the guest's), and the seat and level
    # of the site's computer player if one plays: written once at creation, so
    # that a move needs no read of the users.
    player_names = models.JSONField(default=list, blank=True)
    player_bots = models.JSONField(default=list, blank=True)  # a program plays the seat
    computer_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    computer_level = models.PositiveSmallIntegerField(null=True, blank=True)
    rating_delta = models.JSONField(null=True, blank=True)
    # Why a finished ranked match was not rated (matches.play.fairplay): "too_short",
    # "pair_limit"; empty when rated, or when it was never to be rated.
    unrated_reason = models.CharField(max_length=16, blank=True)
    # The last outage given back to this match, so the page can say what happened:
    # JSON of matches.play.credit.LastCredit (written by matches/clock/outage.py).
    last_credit = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["player0", "status"]),
            models.Index(fields=["player1", "status"]),
            # The sweeper's two questions, answered from small partial indexes.
            models.Index(
                fields=["wake_at_ms"],
                name="match_wake_at",
                condition=models.Q(wake_at_ms__isnull=False),
            ),
            models.Index(
                fields=["needs_push"], name="match_needs_push", condition=models.Q(needs_push=True)
            ),
        ]

    def __str__(self) -> str:
        return f"Match {self.pk} ({self.kind}, {self.status})"

    @property
    def is_over(self) -> bool:
        return self.status in (self.Status.FINISHED, self.Status.ABORTED, self.Status.VOIDED)

    def names(self) -> list[str]:
        if self.player_names:
            return list(self.player_names)
        second = self.player1.username if self.player1_id else self.guest_name
        return [self.player0.username, second]

    def bots(self) -> list[bool]:
        """Whether a program plays each seat (the BOT badge); a same-device guest is a person."""
        if self.player_bots:
            return [bool(b) for b in self.player_bots]
        return [self.player0.plays_as_bot, self.player1 is not None and self.player1.plays_as_bot]

    def seats_of(self, user_id: int | None) -> list[int]:
        """The seats ``user_id`` plays: both at a same-device match, one otherwise."""
        if user_id is None:
            return []
        if self.kind == self.Kind.SAME_DEVICE:
            return [0, 1] if self.player0_id == user_id else []
        seats = []
        if self.player0_id == user_id:
            seats.append(0)
        if self.player1_id == user_id:
            seats.append(1)
        return seats


class MatchEvent(models.Model):
    """Append-only: every engine event and platform step of a match, in order.

    ``data`` holds the full event, private parts included (a drawn tile): it
    is for replays and audits, never sent to a seat as is.
    """

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=24)
    data = models.JSONField(default=dict)
    at_ms = models.BigIntegerField()
    version = models.PositiveIntegerField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.match_id}:{self.kind}"


class Invite(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        ACCEPTED = "accepted", _("Accepted")
        CANCELLED = "cancelled", _("Cancelled")

    code = models.CharField(max_length=32, unique=True, default=_invite_code)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invites"
    )
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    match = models.OneToOneField(
        Match, on_delete=models.SET_NULL, null=True, blank=True, related_name="invite"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def save(self, *args: object, **kwargs: object) -> None:
        if self.expires_at is None:
            self.expires_at = self.created_at + INVITE_TTL
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"Invite {self.code} ({self.status})"

    @property
    def expired(self) -> bool:
        return self.status == self.Status.OPEN and timezone.now() >= self.expires_at


# --- ranked queue, heartbeats, rematch offers (matches/lobby/, matches/clock/liveness.py) ---


class QueueEntry(models.Model):
    """A player waiting in the ranked queue.

    ``matches.lobby.matchmaking`` adds, refreshes and pairs entries; any path
    into a new match (``matches.play.seating.claim_players``) removes them.

    ``rating`` is a snapshot taken at join (ratings only change when a match
    finishes, and a player in a match cannot join). ``last_seen`` is the lobby
    connection's presence: the sweep drops entries not seen for 30 s.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_entry"
    )
    rating = models.IntegerField()
    joined_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    # Whom the player played last (avoided when anyone else fits), found at join.
    last_opponent = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["joined_at", "id"]

    def __str__(self) -> str:
        return f"QueueEntry {self.user_id} ({self.rating})"


class Heartbeat(models.Model):
    """One row per web or worker process, written by ``matches.clock.liveness`` alone.

    Its three writers there: the web tier's beat (which also finds outages), a
    process's goodbye, and the Celery worker's beat.
    """

    class Kind(models.TextChoices):
        WEB = "web", _("Web process")
        WORKER = "worker", _("Worker process")

    kind = models.CharField(max_length=8, choices=Kind.choices)
    name = models.CharField(max_length=200, unique=True)  # hostname:pid
    started_at = models.DateTimeField(default=timezone.now)
    last_beat = models.DateTimeField(default=timezone.now, db_index=True)
    # False once the process said goodbye or its silence was charged as a fault.
    active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class RematchOffer(models.Model):
    """A rematch offered at the end of ``match``; ``matches.lobby.rematch`` is the only writer."""

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        ACCEPTED = "accepted", _("Accepted")
        DECLINED = "declined", _("Declined")
        WITHDRAWN = "withdrawn", _("Withdrawn")

    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="rematch_offer")
    offered_by = models.PositiveSmallIntegerField()  # the seat
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    new_match = models.ForeignKey(
        Match, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"RematchOffer {self.match_id} ({self.status})"


class NoShow(models.Model):
    """A ranked match aborted before 開始 charged to a player; ``matches.play.fairplay`` writes it.

    Recent charges make the ranked queue's cooldown (``fairplay.cooldown_until``).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="no_shows"
    )
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["user", "at"])]
        constraints = [
            models.UniqueConstraint(fields=["user", "match"], name="one_no_show_per_match")
        ]

    def __str__(self) -> str:
        return f"NoShow {self.user_id} ({self.match_id})"
