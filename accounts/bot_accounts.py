"""Bot accounts, as lichess has them: a fresh account turned over to a program.

Every change here takes the user's row lock first (``matches.services.lock_users``),
as every path that puts a player into a match or the queue does: an account
cannot be turned into a bot while a match or a queue entry is being made for
it, nor get two tokens from two rotations at once.

- :func:`become_bot`: only a **fresh** account (no match of any kind yet, not in
  the ranked queue) may. It is for good: a bot plays casual matches only, under
  the BOT badge, and never appears on the leaderboard.
- :func:`issue_token`: makes the account's token, or rotates it (the old one
  dead at once, its sockets closed); the token is returned once, to be shown once.
- :func:`revoke_token`: the token stops working and its sockets close.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from . import tokens
from .models import BotToken


class BotAccountError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.code = code
        self.message = message


def _lock(user: Any) -> Any:
    from matches.play.seating import lock_users

    return lock_users([user.pk])[user.pk]


def is_fresh(user: Any) -> bool:
    """No match of any kind yet, and not waiting in the ranked queue."""
    from matches.models import Match, QueueEntry

    played = Match.objects.filter(Q(player0_id=user.pk) | Q(player1_id=user.pk)).exists()
    return not played and not QueueEntry.objects.filter(user_id=user.pk).exists()


@transaction.atomic
def become_bot(user: Any) -> Any:
    """Make ``user`` a bot account (idempotent); refused unless it is fresh."""
    locked = _lock(user)
    if locked.is_bot:
        return locked
    if not is_fresh(locked):
        raise BotAccountError(
            "not_fresh",
            _(
                "Only a fresh account can become a bot account: this one has played "
                "or is waiting in the ranked queue."
            ),
        )
    locked.is_bot = True
    locked.save(update_fields=["is_bot"])
    return locked


@transaction.atomic
def issue_token(user: Any) -> str:
    """A new token for the bot account ``user``, replacing any it had. Shown once."""
    locked = _lock(user)
    if not locked.is_bot:
        raise BotAccountError("not_a_bot", _("Only a bot account has an API token."))
    token = tokens.new_token()
    row = BotToken.objects.filter(user_id=locked.pk).first()
    if row is None:
        BotToken.objects.create(user=locked, digest=tokens.digest_of(token))
        return token
    tokens.close_sockets_after_commit(row.digest)
    row.digest = tokens.digest_of(token)
    row.created_at = timezone.now()
    row.save(update_fields=["digest", "created_at"])
    return token


@transaction.atomic
def revoke_token(user: Any) -> bool:
    """Revoke ``user``'s token; whether there was one."""
    _lock(user)
    row = BotToken.objects.filter(user_id=user.pk).first()
    if row is None:
        return False
    tokens.close_sockets_after_commit(row.digest)
    row.delete()
    return True
