"""Invites and same-device matches: the casual ways into a match.

Each takes the players' row locks and checks they are free
(``matches.play.seating``) before the match is made; each creation counts
against its hourly budget (``matches.lobby.budgets``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.names import clean_guest_name
from matches.lobby import invite_wait
from matches.lobby.budgets import check_hourly
from matches.models import Invite, Match
from matches.play.errors import ServiceError
from matches.play.seating import claim_players, lock_users, new_match
from matches.play.timing import now_ms
from matches.signals import invite_accepted

# Abuse limits (issue 8): open invites, and matches not yet over, per user.
MAX_OPEN_INVITES = 20


@transaction.atomic
def create_same_device(user: Any, guest_name: str) -> Match:
    """A match for two people at one device; the second seat is a named guest.

    The guest's name obeys the rules of names (``accounts.names``): no
    invisible or control characters in a name the table shows.
    """
    try:
        name = clean_guest_name(guest_name or "")
    except ValidationError as e:
        raise ServiceError("bad_request", e.messages[0]) from None
    claim_players([user])
    check_hourly(user, "same_device")
    return new_match(Match.Kind.SAME_DEVICE, user, None, name)


@transaction.atomic
def create_invite(user: Any) -> Invite:
    lock_users([user.pk])
    check_hourly(user, "invite")
    open_invites = Invite.objects.filter(
        creator=user, status=Invite.Status.OPEN, expires_at__gt=timezone.now()
    ).count()
    if open_invites >= MAX_OPEN_INVITES:
        raise ServiceError(
            "too_many_invites",
            _("You have %(n)d open invites: cancel one before making another.")
            % {"n": open_invites},
        )
    return Invite.objects.create(creator=user)


@transaction.atomic
def cancel_invite(code: str, user: Any) -> Invite:
    # No code holds a NUL and PostgreSQL text cannot (a 500): such a code finds nothing.
    inv = None if "\x00" in code else Invite.objects.select_for_update().filter(code=code).first()
    if inv is None:
        raise ServiceError("not_found", _("No such invite."))
    if inv.creator_id != user.pk:
        raise ServiceError("forbidden", _("Only its creator can cancel an invite."))
    if inv.status != Invite.Status.OPEN:
        raise ServiceError("invite_closed", _("This invite is no longer open."))
    inv.status = Invite.Status.CANCELLED
    inv.save(update_fields=["status"])
    return inv


@transaction.atomic
def accept_invite(code: str, user: Any) -> Match:
    """Accept an open invite; two concurrent accepts make exactly one match.

    The invite row is locked, so the second accept waits and then sees it accepted.
    """
    invites = Invite.objects.select_for_update().select_related("creator")
    inv = None if "\x00" in code else invites.filter(code=code).first()  # as cancel_invite
    if inv is None:
        raise ServiceError("not_found", _("No such invite."))
    if inv.creator_id == user.pk:
        raise ServiceError("own_invite", _("You cannot accept your own invite."))
    if inv.status == Invite.Status.ACCEPTED:
        raise ServiceError("invite_taken", _("This invite has already been accepted."))
    if inv.status == Invite.Status.CANCELLED:
        raise ServiceError("invite_closed", _("This invite was cancelled."))
    if inv.expired:
        raise ServiceError("invite_expired", _("This invite has expired."))
    claim_players([user, inv.creator])
    m = new_match(Match.Kind.CASUAL, inv.creator, user)
    # The creator may have stepped away: a longer start window (lobby/invite_wait.py).
    invite_wait.lengthen_start_window(m, now_ms())
    m.save(update_fields=["ready_deadline_ms", "wake_at_ms"])
    inv.status = Invite.Status.ACCEPTED
    inv.accepted_by = user
    inv.match = m
    inv.save(update_fields=["status", "accepted_by", "match"])
    invite_accepted.send(sender=Invite, invite=inv, match=m)
    return m
