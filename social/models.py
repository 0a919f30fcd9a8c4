"""Playing together: challenges, follows, blocks, notifications, presence, push, reports.

Every row names users by foreign key with ``CASCADE`` except where a record must
outlive an account (reports keep the reporter's report when they leave). A
deleted account is anonymised rather than removed (``social.account``), so
these cascades run only for accounts an administrator really deletes.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# A challenge is a question asked of someone who is on the site now: a few minutes.
CHALLENGE_TTL = timedelta(minutes=3)

USER = settings.AUTH_USER_MODEL


def _challenge_expiry() -> object:
    return timezone.now() + CHALLENGE_TTL


class Challenge(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        ACCEPTED = "accepted", _("Accepted")
        DECLINED = "declined", _("Declined")
        CANCELLED = "cancelled", _("Cancelled")

    challenger = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="challenges_sent")
    challenged = models.ForeignKey(
        USER, on_delete=models.CASCADE, related_name="challenges_received"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=_challenge_expiry)
    match = models.ForeignKey(
        "matches.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["challenged", "status"]),
            models.Index(fields=["challenger", "status"]),
        ]

    @property
    def expired(self) -> bool:
        return self.status == self.Status.OPEN and self.expires_at <= timezone.now()

    @property
    def state(self) -> str:
        """The status as a player sees it: an open challenge past its time is ``expired``."""
        return "expired" if self.expired else self.status


class Follow(models.Model):
    follower = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="following")
    followed = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="followers")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["follower", "followed"], name="follow_once")]


class Block(models.Model):
    blocker = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="blocking")
    blocked = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="blocked_by")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["blocker", "blocked"], name="block_once")]


class Presence(models.Model):
    """When the user's lobby socket (opened by every page) was last seen, and
    whether their pages were last reported hidden (Web Push goes out then)."""

    user = models.OneToOneField(USER, on_delete=models.CASCADE, primary_key=True)
    last_seen = models.DateTimeField(default=timezone.now, db_index=True)
    hidden = models.BooleanField(default=False)
    # The last "your turn" push: ``match_id:version``, so that one decision
    # is announced once.
    turn_pushed = models.CharField(max_length=40, blank=True)
    # The language of the player's last page: pushes are written in it.
    language = models.CharField(max_length=8, blank=True)


class Notification(models.Model):
    class Kind(models.TextChoices):
        CHALLENGE = "challenge", _("Challenge received")
        CHALLENGE_ACCEPTED = "challenge_accepted", _("Challenge accepted")
        CHALLENGE_DECLINED = "challenge_declined", _("Challenge declined")
        MATCH_FOUND = "match_found", _("Ranked match found")
        FOLLOW = "follow", _("New follower")
        ARENA_STARTED = "arena_started", _("Arena started")
        INVITE_ACCEPTED = "invite_accepted", _("Invite accepted")

    user = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    # Who caused it (the challenger, the follower...) and what it points at.
    actor = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    challenge = models.ForeignKey(
        Challenge, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    match_id = models.BigIntegerField(null=True, blank=True)
    arena_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "read_at"])]


class Preferences(models.Model):
    """The settings page's choices that the server must know (sound and vibration
    are kept here too, so that they follow the player to another device)."""

    user = models.OneToOneField(USER, on_delete=models.CASCADE, primary_key=True)
    sound = models.BooleanField(default=True)
    vibration = models.BooleanField(default=True)
    push = models.BooleanField(default=False)  # Web Push opted in


class PushSubscription(models.Model):
    user = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="push_subscriptions")
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)


class Report(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        HANDLED = "handled", _("Handled")

    reporter = models.ForeignKey(USER, null=True, on_delete=models.SET_NULL, related_name="+")
    reported = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.SET_NULL, related_name="reports_against"
    )
    match = models.ForeignKey(
        "matches.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    step = models.PositiveIntegerField(null=True, blank=True)  # the replay step (from 1)
    reason = models.TextField(max_length=2000)
    expected = models.TextField(max_length=2000, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    handled_by = models.ForeignKey(
        USER, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    handled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["status", "-created_at"]
