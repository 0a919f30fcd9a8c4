"""An accepted invite waits for its creator, and a call-off never uses up the link.

The friend who follows a link may arrive while the creator has stepped away. So a
match made from an invite gives both players ``INVITE_START_WINDOW_MS`` (10 minutes)
to press 開始, not the ranked queue's 60 s; the creator's invite page moves on to
the match by itself, and the lobby lists it first. If the window still runs out (or
someone leaves before the first decision), the match is aborted as any other, and
the invite opens again, so the same link works for the next try; an invite past
its 24 hours stays expired.

``lobby.invites.accept_invite`` lengthens the window; the reopening listens to
``matches.signals.match_called_off``, sent by ``play`` inside the transaction that
aborts the match (play, at the bottom, knows nothing of invites).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from matches import conf


def lengthen_start_window(m: Any, now: int) -> None:
    """Give a match just made from an invite the invite's longer start window (unsaved)."""
    deadline = now + conf.invite_start_window_ms()
    m.ready_deadline_ms = deadline
    m.wake_at_ms = deadline


def reopen_called_off_invite(sender: Any = None, *, match: Any, **kwargs: Any) -> None:
    """An aborted match's invite (if any, and not expired) is open again, for the next try."""
    from matches.models import Invite

    m = match
    Invite.objects.filter(
        match_id=m.pk, status=Invite.Status.ACCEPTED, expires_at__gt=timezone.now()
    ).update(status=Invite.Status.OPEN, accepted_by=None, match=None)
