"""The arena bar on an arena match's page, and the arenas on a player's profile."""

from __future__ import annotations

from typing import Any

from django import template

from ..models import Pairing
from ..standings import arenas_of

register = template.Library()

BACK_AFTER_S = 3  # less than services.rest(): back before the next pairing


@register.inclusion_tag("tournaments/_match_bar.html", takes_context=True)
def arena_bar(context: dict[str, Any], match: Any) -> dict[str, Any]:
    """Shown only when the match belongs to an arena: a link back, berserk before 開始."""
    request = context.get("request")
    pk = getattr(match, "pk", None) or (match.get("id") if isinstance(match, dict) else None)
    pairing = Pairing.objects.select_related("arena").filter(match_id=pk).first() if pk else None
    if pairing is None:
        return {"pairing": None}
    user = getattr(request, "user", None)
    seat = None
    if user is not None and user.is_authenticated:
        seat = 0 if pairing.user0_id == user.pk else 1 if pairing.user1_id == user.pk else None
    status = getattr(match, "status", None) or (
        match.get("status") if isinstance(match, dict) else None
    )
    return {
        "pairing": pairing,
        "arena": pairing.arena,
        "match_id": pk,
        "seat": seat,
        "berserked": seat is not None and bool((pairing.berserk or [False, False])[seat]),
        "can_berserk": seat is not None and status == "waiting",
        "back_after_s": BACK_AFTER_S,
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("tournaments/_profile.html")
def arenas_played(user: Any) -> dict[str, Any]:
    entries, best = arenas_of(user)
    return {"entries": entries, "best": best}
