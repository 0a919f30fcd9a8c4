"""The user model.

A custom model from the first migration, so that fields can be added later
without Django's painful mid-project switch of ``AUTH_USER_MODEL``. It is
Django's ``AbstractUser`` with the username rules of ``accounts.names``: the
username is the name shown at the table.
"""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .names import USERNAME_HELP, validate_username

# The site's computer players (bots/ levels), for ``User.computer_level``.
COMPUTER_LEVELS = {1: _("Beginner"), 2: _("Intermediate"), 3: _("Advanced")}


class User(AbstractUser):
    # Django's own field (same length and uniqueness: no stored name changes) with
    # our validator and help text. Django's Japanese help says half-width letters
    # only though it accepts 太郎, and its one message names no fault.
    username = models.CharField(
        _("username"),
        max_length=150,
        unique=True,
        help_text=USERNAME_HELP,
        validators=[validate_username],
        error_messages={"unique": _("A user with that username already exists.")},
    )

    # A program plays for this account (a BOT badge everywhere; casual matches
    # only): a user's own bot account, or one of the site's computer players.
    is_bot = models.BooleanField(default=False)
    # The site's computer player (bots/ level 1, 2 or 3) plays for this account.
    computer_level = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        constraints = [
            # One account per computer level: it is found by its level (accounts.reserved).
            models.UniqueConstraint(
                fields=["computer_level"],
                condition=models.Q(computer_level__isnull=False),
                name="one_account_per_computer_level",
            )
        ]

    @property
    def plays_as_bot(self) -> bool:
        """A program plays for this account: it wears the BOT badge."""
        return self.is_bot or self.computer_level is not None


class BotToken(models.Model):
    """The API token of a bot account (accounts/tokens.py): at most one per account.

    Only the SHA-256 of the token is kept. The token is 256 random bits, so its
    hash can be neither guessed nor reversed, and a leak of this table gives
    nobody a working token. Rotating replaces ``digest`` in place; revoking
    deletes the row.
    """

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="bot_token")
    digest = models.CharField(max_length=64, unique=True)  # hex SHA-256 of the token
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"bot token of {self.user_id} ({self.created_at:%Y-%m-%d %H:%M})"
