"""What the lobby and the API show of the players one follows (and has blocked)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from matches.models import Match
from ratings.services import rating_of

from . import presence
from .models import Block, Follow


@dataclass
class Friend:
    user: Any
    online: bool
    rating: Any  # ratings.services.Rating: .value, .display
    match_id: int | None  # the live match they play, to watch


def following(user: Any, *, online_only: bool = False) -> list[Friend]:
    rows = list(
        Follow.objects.filter(follower=user, followed__is_active=True)
        .select_related("followed")
        .order_by("followed__username")
    )
    ids = [r.followed_id for r in rows]
    online = presence.online_ids(ids)
    live: dict[int, int] = {}
    for m in Match.objects.filter(
        Q(player0_id__in=ids) | Q(player1_id__in=ids), status=Match.Status.LIVE
    ).values("pk", "player0_id", "player1_id"):
        for uid in (m["player0_id"], m["player1_id"]):
            live.setdefault(uid, m["pk"])
    out = []
    for r in rows:
        # A player in a live match is online whatever their lobby socket says.
        on = r.followed_id in online or r.followed_id in live
        if online_only and not on:
            continue
        out.append(Friend(r.followed, on, rating_of(r.followed), live.get(r.followed_id)))
    return out


def following_json(user: Any) -> dict[str, Any]:
    return {
        "following": [
            {
                "username": f.user.username,
                "online": f.online,
                "rating": f.rating.value,
                "match_id": f.match_id,
                "watch": f"/matches/{f.match_id}/" if f.match_id else None,
            }
            for f in following(user)
        ]
    }


def blocked_json(user: Any) -> dict[str, Any]:
    names = Block.objects.filter(blocker=user).order_by("blocked__username")
    return {"blocked": list(names.values_list("blocked__username", flat=True))}
