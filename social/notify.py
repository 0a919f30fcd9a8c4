"""Notifications: a row per event, pushed to the player's open pages, and Web Push.

:func:`notify` writes a :class:`~social.models.Notification` in the caller's
transaction and, after the commit, sends it over the player's lobby group
(``lobby.user.<id>``, which every page of theirs joins through the bell's
socket) as ``{"type": "notification", "notification": {...}, "unread": n}``.
A challenge, and a ranked match found, also go out by Web Push when the player
opted in and their pages are hidden (``social.presence.is_hidden``).

The ranked match found is heard, not called: ``matches.signals.ranked_paired``,
sent by the queue after a pairing commits (:func:`connect_match_found`).
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import override

from matches.lobby.matchmaking import lobby_group

from . import presence, webpush
from .models import Notification

log = logging.getLogger(__name__)


def _send(user_id: int, frame: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            lobby_group(user_id), {"type": "lobby.frame", "frame": frame}
        )
    except Exception:  # a push is a courtesy: the row is the truth
        log.exception("notification push to user %s failed", user_id)


def tell(user_id: int, frame: dict[str, Any]) -> None:
    """Send ``frame`` to the player's open pages after the commit."""
    transaction.on_commit(lambda: _send(user_id, frame))


def text(n: Notification) -> str:
    name = n.actor.username if n.actor_id else ""
    texts = {
        Notification.Kind.CHALLENGE: _("%(name)s challenges you to a casual match."),
        Notification.Kind.CHALLENGE_ACCEPTED: _("%(name)s accepted your challenge."),
        Notification.Kind.CHALLENGE_DECLINED: _("%(name)s declined your challenge."),
        Notification.Kind.MATCH_FOUND: _("Ranked match found."),
        Notification.Kind.FOLLOW: _("%(name)s follows you now."),
        Notification.Kind.INVITE_ACCEPTED: _(
            "%(name)s accepted your invite: the match is waiting for you to press Start."
        ),
        Notification.Kind.ARENA_STARTED: _(
            "An arena you joined has started: your first pairing is coming."
        ),
    }
    return texts.get(n.kind, n.kind) % {"name": name}


def link(n: Notification) -> str:
    if n.match_id:
        return reverse("matches:match", args=[n.match_id])
    if n.arena_id:
        return reverse("tournaments:arena", args=[n.arena_id])
    if n.kind == Notification.Kind.FOLLOW and n.actor_id:
        return reverse("profile", args=[n.actor.username])
    return reverse("social:notifications")


def as_json(n: Notification) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": n.pk,
        "kind": n.kind,
        "text": text(n),
        "url": link(n),
        "created_at": n.created_at.isoformat(),
        "read": n.read_at is not None,
        "from": n.actor.username if n.actor_id else None,
    }
    if n.challenge_id is not None:
        ch = n.challenge
        out["challenge"] = {
            "id": ch.pk,
            "status": ch.state,
            "expires_at": ch.expires_at.isoformat(),
        }
    if n.match_id:
        out["match_id"] = n.match_id
    if n.arena_id:
        out["arena_id"] = n.arena_id
    return out


def unread(user_id: int) -> int:
    return Notification.objects.filter(user_id=user_id, read_at__isnull=True).count()


def notify(
    user_id: int,
    kind: str,
    *,
    actor: Any = None,
    challenge: Any = None,
    match_id: int | None = None,
    arena_id: int | None = None,
    push: bool = False,
) -> Notification:
    n = Notification.objects.create(
        user_id=user_id,
        kind=kind,
        actor=actor,
        challenge=challenge,
        match_id=match_id,
        arena_id=arena_id,
    )

    def after() -> None:
        row = Notification.objects.select_related("actor", "challenge").get(pk=n.pk)
        # The page's own language renders the toast (notify.js fetches it); the
        # frame's and the push's text are in the player's last page's language.
        with override(presence.language_of(user_id)):
            body = as_json(row)
            title = _("Spectacular Bid")
        _send(user_id, {"type": "notification", "notification": body, "unread": unread(user_id)})
        if push and presence.is_hidden(user_id):
            webpush.send_after_commit(user_id, {"title": title, **body})

    transaction.on_commit(after)
    return n


def mark_read(user: Any) -> int:
    return Notification.objects.filter(user=user, read_at__isnull=True).update(
        read_at=timezone.now()
    )


def recent(user: Any, limit: int = 30) -> list[Notification]:
    return list(Notification.objects.filter(user=user).select_related("actor", "challenge")[:limit])


def _on_ranked_paired(sender: Any, match_id: int, user_ids: list[int], **kwargs: Any) -> None:
    for uid in user_ids:
        try:
            notify(uid, Notification.Kind.MATCH_FOUND, match_id=match_id, push=True)
        except Exception:  # the match is made: a notification is a courtesy
            log.exception("match-found notification for user %s failed", uid)


def _on_arena_started(sender: Any, arena_id: int, user_ids: list[int], **kwargs: Any) -> None:
    for uid in user_ids:
        notify(uid, Notification.Kind.ARENA_STARTED, arena_id=arena_id, push=True)


def _on_invite_accepted(sender: Any, invite: Any, match: Any, **kwargs: Any) -> None:
    notify(
        invite.creator_id,
        Notification.Kind.INVITE_ACCEPTED,
        actor=invite.accepted_by,
        match_id=match.pk,
        push=True,
    )


def connect_invite_accepted() -> None:
    from matches.signals import invite_accepted

    invite_accepted.connect(_on_invite_accepted, dispatch_uid="social-invite-accepted")


def connect_arena_started() -> None:
    from tournaments.signals import arena_started

    arena_started.connect(_on_arena_started, dispatch_uid="social-arena-started")


def connect_match_found() -> None:
    from matches.signals import ranked_paired

    ranked_paired.connect(_on_ranked_paired, dispatch_uid="social-match-found")
