"""Pushing views to the seats, after a commit.

Each seat has its own channel group and receives only its own view; a
same-device match has one group for the device. The channel layer never
carries a view meant for somebody else.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def group_name(match_id: int, audience: str) -> str:
    """``audience`` is ``seat0``, ``seat1`` or ``device``."""
    return f"match.{match_id}.{audience}"


def push_match(match_id: int) -> None:
    """Send every audience of the match its current view (read from the committed row)."""
    from .services import seat_views

    found = seat_views(match_id)
    layer = get_channel_layer()
    if found is None or layer is None:
        return
    _, views = found
    send = async_to_sync(layer.group_send)
    for audience, view in views.items():
        message: dict[str, Any] = {"type": "match.view", "view": view}
        send(group_name(match_id, audience), message)
