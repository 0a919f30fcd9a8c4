"""Web Push "your turn" for a player whose pages are hidden.

Not on the move's path (a move must not wait for a query of ours): a pass
every :data:`EVERY_S` (``social.tasks.push_turns`` on Celery beat, or the
embedded loop through ``matches.realtime.periodic.EXTRA_JOBS``) looks only at the
players who opted in and whose pages are hidden or gone, finds their live
matches where the seat to act is theirs, and pushes once per decision
(``Presence.turn_pushed`` keeps the last ``match:version`` announced).
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import override

from matches.models import Match

from . import presence, webpush
from .models import Preferences, Presence

EVERY_S = 3.0


def push_turns() -> int:
    """One pass; how many pushes were queued."""
    since = timezone.now() - presence.ONLINE_FOR
    opted = set(Preferences.objects.filter(push=True).values_list("user_id", flat=True))
    if not opted:
        return 0
    rows = {
        p.user_id: p
        for p in Presence.objects.filter(user_id__in=opted).filter(
            Q(hidden=True) | Q(last_seen__lt=since)
        )
    }
    absent = opted - set(
        Presence.objects.filter(user_id__in=opted).values_list("user_id", flat=True)
    )
    hidden = set(rows) | absent
    if not hidden:
        return 0
    sent = 0
    live = Match.objects.filter(
        Q(player0_id__in=hidden) | Q(player1_id__in=hidden),
        status=Match.Status.LIVE,
    ).exclude(kind=Match.Kind.SAME_DEVICE)
    for m in live.only("pk", "version", "state", "player0_id", "player1_id", "kind"):
        seat = (m.state or {}).get("to_act")
        uid = m.player0_id if seat == 0 else m.player1_id if seat == 1 else None
        if uid not in hidden:
            continue
        key = f"{m.pk}:{m.version}"
        row = rows.get(uid)
        if row is not None and row.turn_pushed == key:
            continue
        Presence.objects.update_or_create(user_id=uid, defaults={"turn_pushed": key})
        url = reverse("matches:match", args=[m.pk])
        with override(row.language if row is not None and row.language else settings.LANGUAGE_CODE):
            payload = {"title": _("Spectacular Bid"), "kind": "your_turn", "text": _("Your turn."),
                       "url": url, "match_id": m.pk}  # fmt: skip
        webpush.send_after_commit(uid, payload)
        sent += 1
    return sent
