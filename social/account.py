"""The settings page's heavy parts: download my data, and delete my account.

**Export** (:func:`export`): the profile, the rating history and every match
the player sat in, each match that is over with its steps as the replay builds
them (``history.replay``), cut down to what that player could see: their own
hand (both at a same-device match), the table, the clocks and scores, their own
draws. Never the opponent's hand, the talon, or which tiles the opponent drew.
A match not over yet is listed without steps (its hands are still secret).

**Deletion** (:func:`delete_account`): the account is anonymised, not removed
(matches point at their players, and the opponents' histories and ratings must
stay as they were): the name becomes ``deleted-<random>`` on the account and in
every match row that shows it, the e-mail, password and social rows go, and
the account can no longer log in. Refused while the player has a match waiting
or under way.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from history import replay as replays
from matches.models import Match, QueueEntry
from matches.play import seating
from matches.play.errors import ServiceError
from matches.ui.text import draw_sentence
from ratings.models import RatingChange
from ratings.services import rating_of

from .models import Block, Challenge, Follow, Notification, Preferences, Presence, PushSubscription

DELETED_PREFIX = "deleted-"


def _tiles(tiles: Any) -> list[list[int]]:
    return [list(t) for t in tiles]


def _visible_step(step: Any, mine: list[int], names: list[str]) -> dict[str, Any]:
    text = step.text
    out: dict[str, Any] = {
        "step": step.index + 1,
        "kind": step.kind,
        "player": step.player,
        "hand": step.hand_no,
        "forced": step.forced,
        "balances": list(step.balances),
        "main_ms": list(step.main) if step.main is not None else None,
        "used_ms": step.used,
        "elapsed_ms": step.elapsed_ms,
        "tile": list(step.tile) if step.tile is not None else None,
        "table": [
            {
                "tile": list(p.tile),
                "on": list(p.at) if p.at else None,
                "side": p.side,
                "player": p.player,
            }
            for p in step.layout
        ],  # fmt: skip
        "my_hands": {str(s): _tiles(step.hands[s]) for s in mine} if step.hands else {},
    }
    if step.draws:
        if step.drawer in mine:
            out["draws"] = _tiles(step.draws)
        else:
            # The replay's sentence names the drawn tiles: the opponent's are not ours to see.
            prefix = draw_sentence(step.drawer, step.draws, names)
            text = text[len(prefix) :].lstrip()
            out["draws_count"] = len(step.draws)
            text = (
                _("%(name)s draws %(n)d tiles from the talon.")
                % {
                    "name": names[step.drawer] if step.drawer in (0, 1) else "",
                    "n": len(step.draws),
                }
                + " "
                + text
            ).strip()
    out["text"] = text
    return out


def match_export(m: Match, user: Any) -> dict[str, Any]:
    mine = m.seats_of(user.pk)
    names = m.names()
    out: dict[str, Any] = {
        "id": m.pk,
        "kind": m.kind,
        "status": m.status,
        "seats": mine,
        "names": names,
        "created_at": m.created_at.isoformat(),
        "finished_at": m.finished_at.isoformat() if m.finished_at else None,
        "winner_seat": m.winner_seat,
        "end_reason": m.end_reason,
        "rating_delta": m.rating_delta,
    }
    if m.is_over:
        rp = replays.build(m)
        out["steps"] = [_visible_step(s, mine, rp.names) for s in rp.steps]
    return out


def export(user: Any) -> dict[str, Any]:
    r = rating_of(user)
    matches = (
        Match.objects.filter(Q(player0=user) | Q(player1=user))
        .select_related("player0", "player1")
        .order_by("created_at", "pk")
    )
    return {
        "profile": {
            "username": user.username,
            "email": user.email,
            "date_joined": user.date_joined.isoformat(),
            "rating": r.value,
            "rating_display": r.display,
            "bot_account": bool(user.is_bot),
        },
        "rating_history": [
            {
                "match_id": c.match_id,
                "before": c.before,
                "after": c.after,
                "at": c.created_at.isoformat(),
            }
            for c in RatingChange.objects.filter(player=user).order_by("created_at", "id")
        ],  # fmt: skip
        "following": list(
            Follow.objects.filter(follower=user).values_list("followed__username", flat=True)
        ),
        "blocked": list(
            Block.objects.filter(blocker=user).values_list("blocked__username", flat=True)
        ),
        "matches": [match_export(m, user) for m in matches],
    }


@transaction.atomic
def delete_account(user: Any) -> str:
    """Anonymise ``user`` (see the module docstring); the new name."""
    seating.lock_users([user.pk])
    busy = seating.open_matches_of([user.pk])
    if busy:
        raise ServiceError("busy", _("Finish your current match first."), match_id=busy[0].pk)
    User = get_user_model()
    while True:
        name = DELETED_PREFIX + secrets.token_hex(4)
        if not User.objects.filter(username=name).exists():
            break
    for m in Match.objects.select_for_update().filter(Q(player0=user) | Q(player1=user)):
        names = m.names()
        for seat in m.seats_of(user.pk):
            if m.kind != Match.Kind.SAME_DEVICE or seat == 0:  # a guest's name is the guest's
                names[seat] = name
        Match.objects.filter(pk=m.pk).update(player_names=names)
    for model, field in (
        (Follow, "follower"), (Follow, "followed"), (Block, "blocker"), (Block, "blocked"),
        (Challenge, "challenger"), (Challenge, "challenged"), (Notification, "user"),
        (Notification, "actor"), (PushSubscription, "user"), (Presence, "user"),
        (Preferences, "user"), (QueueEntry, "user"),
    ):  # fmt: skip
        model.objects.filter(**{field: user}).delete()
    from accounts.models import BotToken

    BotToken.objects.filter(user=user).delete()
    user.username = name
    user.email = ""
    user.first_name = user.last_name = ""
    user.is_active = False
    user.set_unusable_password()
    user.save()
    return name
