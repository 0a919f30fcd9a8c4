"""Who is online: a lobby socket seen in the last :data:`ONLINE_FOR`.

Every page of a logged-in player opens the lobby socket (``static/js/notify.js``:
the bell), and the socket (``matches.realtime.lobby_consumer``) announces itself through
``matches.signals.lobby_seen`` on connect, every 10 s while open, and on close.
The stamp is written at most once per :data:`WRITE_EVERY` per player, so an
idle page costs one small UPDATE every half minute. A player is **online**
while the stamp is younger than :data:`ONLINE_FOR` (a closed tab drops out of
the friends list within that time), and **in a match** while they hold a seat
in a live one (the lobby links to it, to watch).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.utils import timezone

from .models import Presence

ONLINE_FOR = timedelta(seconds=45)
WRITE_EVERY = timedelta(seconds=20)


def touch(user_id: int, *, force: bool = False) -> None:
    now = timezone.now()
    qs = Presence.objects.filter(user_id=user_id)
    if not force:
        qs = qs.filter(last_seen__lt=now - WRITE_EVERY)
    if not qs.update(last_seen=now):
        Presence.objects.get_or_create(user_id=user_id, defaults={"last_seen": now})


def on_lobby_seen(sender: Any, user_id: int, event: str = "tick", **kwargs: Any) -> None:
    # A closing socket is stamped too: ``ONLINE_FOR`` is counted from then.
    touch(user_id, force=event in ("connect", "disconnect"))


def online_ids(user_ids: Iterable[int]) -> set[int]:
    since = timezone.now() - ONLINE_FOR
    return set(
        Presence.objects.filter(user_id__in=list(user_ids), last_seen__gte=since).values_list(
            "user_id", flat=True
        )
    )


def set_hidden(user_id: int, hidden: bool, language: str = "") -> None:
    """The player's page reported that it is hidden (or visible again), in ``language``."""
    now = timezone.now()
    fields = {"hidden": hidden, "last_seen": now, **({"language": language} if language else {})}
    if not Presence.objects.filter(user_id=user_id).update(**fields):
        Presence.objects.get_or_create(user_id=user_id, defaults=fields)


def language_of(user_id: int) -> str:
    """The language to write to the player in when no page of theirs asks (Web Push)."""
    from django.conf import settings

    found = Presence.objects.filter(user_id=user_id).values_list("language", flat=True).first()
    return found or settings.LANGUAGE_CODE


def is_hidden(user_id: int) -> bool:
    """Whether a push should go out: no page seen lately, or the last one hidden."""
    p = Presence.objects.filter(user_id=user_id).first()
    return p is None or p.hidden or p.last_seen < timezone.now() - ONLINE_FOR
