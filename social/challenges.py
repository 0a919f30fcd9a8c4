"""Challenges: ask a player by name for a casual match.

The rules are the invites' (``matches.play.seating``, ``matches.lobby.invites``):
a challenge is casual (the ranked queue keeps ranked play), and accepting it
goes through the same
``claim_players`` (user-row locks, ``check_free``'s busy and limit rules, out
of the queue) and ``new_match`` as accepting an invite. On top of that:

- nobody challenges themselves (``self``), one of the site's computer players
  (``computer``: they are played from the lobby's card), or a player either of
  them has blocked (``blocked``, HTTP 403);
- a busy player is refused when challenged, not only when accepting;
- at most :data:`MAX_OPEN` open challenges per challenger, one per opponent,
  and :data:`MAX_PER_HOUR` made in an hour;
- a challenge expires :data:`~social.models.CHALLENGE_TTL` after it was made.

**Accepting twice at once makes one match**: :func:`accept` locks the
challenge row (``select_for_update``) before anything else, so a second accept
waits for the first to commit and then finds it ``accepted``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from matches.models import Match
from matches.play import seating
from matches.play.errors import ServiceError

from . import blocks, notify
from .models import Challenge

MAX_OPEN = 5
# Made (whatever became of them) per challenger per hour: cancelling and asking
# again must not become a way to ring someone's bell all day.
MAX_PER_HOUR = 30


def _target(username: Any) -> Any:
    if not isinstance(username, str) or not username.strip():
        raise ServiceError("bad_request", _("Name the player to challenge."))
    # No name holds a NUL (accounts/names.py) and PostgreSQL text cannot: nobody, not a 500.
    users = get_user_model().objects.filter(is_active=True)
    user = None if "\x00" in username else users.filter(username=username.strip()).first()
    if user is None:
        raise ServiceError("not_found", _("There is no player of that name."))
    return user


def _open(qs: Any) -> Any:
    return qs.filter(status=Challenge.Status.OPEN, expires_at__gt=timezone.now())


def create(user: Any, username: Any) -> Challenge:
    target = _target(username)
    if target.pk == user.pk:
        raise ServiceError("self", _("You cannot challenge yourself."))
    if target.computer_level:
        raise ServiceError(
            "computer", _("Play the computer from the lobby: it does not take challenges.")
        )
    if blocks.is_blocked_between(user.pk, target.pk):
        raise ServiceError("blocked", _("You cannot challenge this player."))
    with transaction.atomic():
        seating.lock_users([user.pk, target.pk])
        seating.check_free(user, opponent=target)
        mine = _open(Challenge.objects.filter(challenger=user))
        same = mine.filter(challenged=target).first()
        if same is not None:
            raise ServiceError("already_challenged", _("You have already challenged this player."))
        made = Challenge.objects.filter(
            challenger=user, created_at__gte=timezone.now() - timedelta(hours=1)
        ).count()
        if made >= MAX_PER_HOUR:
            raise ServiceError(
                "too_many_challenges", _("Too many challenges in an hour: try again later.")
            )
        if mine.count() >= MAX_OPEN:
            raise ServiceError(
                "too_many_challenges",
                _("You have %(n)d open challenges: wait for an answer or cancel one.")
                % {"n": MAX_OPEN},
            )
        ch = Challenge.objects.create(challenger=user, challenged=target)
        notify.notify(target.pk, "challenge", actor=user, challenge=ch, push=True)
    return ch


def _locked(challenge_id: int) -> Challenge:
    ch = (
        Challenge.objects.select_for_update()
        .select_related("challenger", "challenged")
        .filter(pk=challenge_id)
        .first()
    )
    if ch is None:
        raise ServiceError("not_found", _("No such challenge."))
    return ch


def _still_open(ch: Challenge) -> None:
    if ch.status == Challenge.Status.ACCEPTED:
        raise ServiceError(
            "challenge_taken", _("This challenge has already been accepted."), match_id=ch.match_id
        )
    if ch.status != Challenge.Status.OPEN:
        raise ServiceError("challenge_closed", _("This challenge is no longer open."))
    if ch.expired:
        raise ServiceError("challenge_expired", _("This challenge has expired."))


@transaction.atomic
def accept(challenge_id: int, user: Any) -> Match:
    ch = _locked(challenge_id)  # first: a second accept waits here, then sees it accepted
    if ch.challenged_id != user.pk:
        raise ServiceError("not_found", _("No such challenge."))
    _still_open(ch)
    if blocks.is_blocked_between(ch.challenger_id, ch.challenged_id):
        raise ServiceError("blocked", _("You cannot challenge this player."))
    seating.claim_players([user, ch.challenger])
    m = seating.new_match(Match.Kind.CASUAL, ch.challenger, user)
    ch.status = Challenge.Status.ACCEPTED
    ch.match = m
    ch.save(update_fields=["status", "match"])
    notify.notify(ch.challenger_id, "challenge_accepted", actor=user, challenge=ch, match_id=m.pk)
    return m


@transaction.atomic
def decline(challenge_id: int, user: Any) -> Challenge:
    ch = _locked(challenge_id)
    if ch.challenged_id != user.pk:
        raise ServiceError("not_found", _("No such challenge."))
    _still_open(ch)
    ch.status = Challenge.Status.DECLINED
    ch.save(update_fields=["status"])
    notify.notify(ch.challenger_id, "challenge_declined", actor=user, challenge=ch)
    return ch


@transaction.atomic
def cancel(challenge_id: int, user: Any) -> Challenge:
    ch = _locked(challenge_id)
    if ch.challenger_id != user.pk:
        raise ServiceError("not_found", _("No such challenge."))
    _still_open(ch)
    ch.status = Challenge.Status.CANCELLED
    ch.save(update_fields=["status"])
    notify.tell(ch.challenged_id, {"type": "challenge_closed", "id": ch.pk})
    return ch


def as_json(ch: Challenge) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": ch.pk,
        "from": ch.challenger.username,
        "to": ch.challenged.username,
        "status": ch.state,
        "kind": Match.Kind.CASUAL.value,
        "created_at": ch.created_at.isoformat(),
        "expires_at": ch.expires_at.isoformat(),
        "match_id": ch.match_id,
    }
    if ch.match_id is not None:
        out["url"] = reverse("matches:match", args=[ch.match_id])
        out["ws"] = f"/ws/matches/{ch.match_id}/"
    return out


def open_for(user: Any) -> dict[str, list[Challenge]]:
    """The open challenges ``user`` received and sent (newest first)."""
    qs = _open(Challenge.objects.select_related("challenger", "challenged"))
    return {
        "incoming": list(qs.filter(challenged=user)[:20]),
        "outgoing": list(qs.filter(challenger=user)[:20]),
    }


def between(a: Any, b: Any) -> Challenge | None:
    """The open challenge from ``a`` to ``b``, if any (the profile's cancel button)."""
    return _open(Challenge.objects.filter(Q(challenger=a, challenged=b))).first()
