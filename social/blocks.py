"""Follows and blocks.

A block works one way in what it hides (the blocker no longer sees the blocked
player's name in the lobby) and both ways in what it prevents: neither can
challenge the other (``403 blocked``), and the ranked queue never pairs them
(``matches.lobby.matchmaking.KEEP_APART``). Blocking also cancels the open challenges
between the two and ends the blocker's follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from matches.play.errors import ServiceError

from .models import Block, Challenge, Follow


def _other(user: Any, target: Any) -> None:
    if target.pk == user.pk:
        raise ServiceError("self", _("That is you."))


def follow(user: Any, target: Any) -> bool:
    """Follow ``target``; whether it is new (following twice changes nothing)."""
    _other(user, target)
    if is_blocked_between(user.pk, target.pk):
        raise ServiceError("blocked", _("You cannot follow this player."))
    try:
        with transaction.atomic():
            Follow.objects.create(follower=user, followed=target)
    except IntegrityError:
        return False
    from . import notify
    from .models import Notification

    # Following, unfollowing and following again rings the bell once a day at most.
    since = timezone.now() - timedelta(days=1)
    if not Notification.objects.filter(
        user=target, kind="follow", actor=user, created_at__gte=since
    ).exists():
        notify.notify(target.pk, "follow", actor=user)
    return True


def unfollow(user: Any, target: Any) -> bool:
    return bool(Follow.objects.filter(follower=user, followed=target).delete()[0])


def block(user: Any, target: Any) -> bool:
    _other(user, target)
    with transaction.atomic():
        _b, created = Block.objects.get_or_create(blocker=user, blocked=target)
        Follow.objects.filter(follower=user, followed=target).delete()
        between = Q(challenger=user, challenged=target) | Q(challenger=target, challenged=user)
        Challenge.objects.filter(between, status=Challenge.Status.OPEN).update(
            status=Challenge.Status.CANCELLED
        )
    return created


def unblock(user: Any, target: Any) -> bool:
    return bool(Block.objects.filter(blocker=user, blocked=target).delete()[0])


def is_following(user: Any, target: Any) -> bool:
    return Follow.objects.filter(follower=user, followed=target).exists()


def has_blocked(user: Any, target: Any) -> bool:
    return Block.objects.filter(blocker=user, blocked=target).exists()


def is_blocked_between(a: int, b: int) -> bool:
    return Block.objects.filter(
        Q(blocker_id=a, blocked_id=b) | Q(blocker_id=b, blocked_id=a)
    ).exists()


def blocked_ids(user_id: int) -> set[int]:
    """The players ``user_id`` has blocked (their names are hidden from the lobby)."""
    return set(Block.objects.filter(blocker_id=user_id).values_list("blocked_id", flat=True))


def blocked_pairs(user_ids: Sequence[int]) -> set[frozenset[int]]:
    """Pairs among ``user_ids`` that one of them has blocked: the queue keeps them apart."""
    ids = list(user_ids)
    rows = Block.objects.filter(blocker_id__in=ids, blocked_id__in=ids).values_list(
        "blocker_id", "blocked_id"
    )
    return {frozenset(r) for r in rows}
