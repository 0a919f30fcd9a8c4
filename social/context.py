"""The bell's unread count in every page's header (one COUNT, only when shown)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject


def bell(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    from .notify import unread

    return {"bell_unread": SimpleLazyObject(lambda: unread(user.pk))}
