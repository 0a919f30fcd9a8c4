"""``{% queue_status user as q %}``: the ranked queue card's context (lobby/_queue.html)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag
def queue_status(user: Any) -> dict[str, Any] | None:
    if user is None or not user.is_authenticated:
        return None
    from matches.lobby.views import card_context

    return card_context(user)
