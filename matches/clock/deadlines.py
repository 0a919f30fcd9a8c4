"""Deadlines: what happens by itself at a match's wake-up time.

Every row carries ``wake_at_ms`` (``matches.play.timing.next_wakeup``). A sweeper
(:func:`due_matches` + :func:`check_match`, run by ``matches.clock.sweeper``)
finds overdue rows through an index, so no deadline can be lost with the
process that made it.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

import engine
from matches.models import Match
from matches.play import late_push, timing
from matches.play.act import (
    abort,
    credit_late_pushed,
    finish_if_over,
    maybe_auto_continue,
    not_ready,
)
from matches.play.store import locked_match, save_change
from matches.play.timing import next_wakeup

# The sweeper looks at a row this long after its wake-up time: a frame stamped
# just before a deadline may still be on its way to the row lock, and it is
# judged by its receipt time, so the sweeper must not beat it to the lock.
GRACE_MS = 50


def due_matches(until_ms: int, limit: int = 200) -> list[tuple[int, int]]:
    """``(id, version)`` of the matches due to wake up at or before ``until_ms``."""
    return list(
        Match.objects.filter(wake_at_ms__lte=until_ms)
        .order_by("wake_at_ms")
        .values_list("pk", "version")[:limit]
    )


def next_wake_ms() -> int | None:
    """The earliest pending wake-up time (epoch ms), if any."""
    row = (
        Match.objects.filter(wake_at_ms__isnull=False)
        .order_by("wake_at_ms")
        .values_list("wake_at_ms", flat=True)[:1]
    )
    return next(iter(row), None)


def check_match(match_id: int, version: int | None = None, now: int | None = None) -> bool:
    """Whatever must happen by itself at this match's wake-up time; whether anything did.

    Idempotent: a stale ``version`` (the match moved on) or a row locked by a
    frame being applied right now is left alone — the newer version carries its
    own wake-up time. The time is read *after* the lock is held, so a late
    sweep can only find a deadline further in the past: it never lets a late
    move through, and a frame that arrived in time was stamped on arrival and
    is judged by that.
    """
    with transaction.atomic():
        m = locked_match(match_id, skip_locked=True)
        if m is None or (version is not None and m.version != version) or m.is_over:
            return False
        t = timing.now_ms() if now is None else now
        if m.wake_at_ms is None or t < m.wake_at_ms:
            return False  # woke early: the row says when
        events: list[dict[str, Any]] = []
        state = engine.from_dict(m.state) if m.state is not None else None
        before = state
        if m.status == Match.Status.WAITING:
            abort(m, t, events, blame=not_ready(m))
        else:
            assert state is not None
            new, ev = engine.expire(state, t)
            if ev and state.to_act is not None:
                # Its turn reached its socket late (our backlog): that wait is given back
                # before the seat can lose on time for it (matches.play.late_push).
                late = late_push.read_one(m.pk, state.to_act)
                if late is not None:
                    state = credit_late_pushed(m, state, state.to_act, late, t, events)
                    new, ev = engine.expire(state, t)
            if ev:
                events.extend(ev)
                finish_if_over(m, new, events)
                state = new
            elif state.phase == engine.HAND_OVER:
                state = maybe_auto_continue(m, state, t, events)
        if not events:
            # Nothing due after all (cannot happen while wake_at_ms is right): recompute it.
            m.wake_at_ms = next_wakeup(m, state)
            m.save(update_fields=["wake_at_ms"])
            return False
        save_change(m, state, events, before=before, now=t)
        return True
