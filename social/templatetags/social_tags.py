"""``{% friends_online user %}`` (the lobby), ``{% social_card player user %}`` (a profile),
``{{ watchable|without_blocked:user }}`` (a blocked player's name never in your lobby)."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from .. import blocks, challenges, friends

register = template.Library()


@register.inclusion_tag("social/_friends_online.html", takes_context=True)
def friends_online(context: Any, user: Any) -> dict[str, Any]:
    return {
        "friends": friends.following(user, online_only=True),
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
        "incoming": challenges.open_for(user)["incoming"],
    }


@register.inclusion_tag("social/_profile_card.html", takes_context=True)
def social_card(context: Any, player: Any, viewer: Any) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "player": player,
        "viewer": viewer,
        "request": context.get("request"),
        "csrf_token": context.get("csrf_token"),
    }
    if viewer.is_authenticated and viewer.pk != player.pk:
        ctx.update(
            following=blocks.is_following(viewer, player),
            blocking=blocks.has_blocked(viewer, player),
            open_challenge=challenges.between(viewer, player),
            can_challenge=not player.computer_level,
            report_url=reverse("social:report_player", args=[player.username]),
        )
    return ctx


@register.filter
def without_blocked(matches: Any, user: Any) -> list[Any]:
    """The matches in which no player ``user`` blocked plays."""
    if not getattr(user, "is_authenticated", False):
        return list(matches)
    hidden = blocks.blocked_ids(user.pk)
    return [m for m in matches if not ({m.player0_id, m.player1_id} & hidden)]
