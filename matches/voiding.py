"""Voiding after a service fault (RULES §8): heartbeats, the fault scan, flags, voids.

**Heartbeats.** Every web process beats once a second from its asyncio loop
(``matches.periodic``); the Celery workers beat from a beat task
(``matches.tasks.heartbeat``, every second). Each process has a ``Heartbeat``
row named ``hostname:pid``.

**What counts as a gap** (more than :data:`GAP` = 5 s without a beat):

- *a web process*: its own beats. Each web process is a unit, because the seats
  connected to it are stuck while it is;
- *the workers*: the newest beat of any worker. A beat task goes to whichever
  worker is free, so one worker's row may rest for a while; what matters is that
  the pool runs tasks (the deadline backstops) within 5 s;
- *everything*: the newest beat of all rows, so an outage of the whole service
  is found by the first process to beat again, even if nothing ran a scan.

Gaps are found two ways. A process that beats after more than 5 s of its own
(or everyone's) silence reports the gap itself (:func:`beat`). And the fault
scan (:func:`scan`, every 2 s: Celery beat, or the embedded loop) charges any
expected process that has gone silent for more than 5 s up to now, marks it
inactive (so a dead process is charged once, not forever) and stamps
``charged_through``; should it beat again, only the silence after that stamp
is charged. A process that exits cleanly marks its row inactive (:func:`retire`),
which is not a fault while others keep beating.

**Which matches a gap voids** (:func:`flag_clock_ran_between`): the live
matches whose clock may have run during the gap. A live match whose last event
is older than the gap's start and whose clock stands still now (between hands,
awaiting a reveal) had its clock stopped for the whole gap and is spared; any
other live match started before the gap ended is flagged. This errs towards
voiding: a match that changed during or after the gap is not replayed to see
whether its clock happened to be stopped.

**Voiding.** Flags (from the scan, or staff's "Flag for voiding" in the admin)
are carried out by :func:`void_flagged`: the Celery task
``matches.tasks.void_flagged_matches`` (queued right after a flag commits) or,
in the embedded default, directly. A voided match has status ``voided``,
``end_reason`` ``void`` and a ``void_reason`` (an English source string, translated
when shown); it has no winner and no rating change (ratings settle only finished
matches). Both seats get the new view at once; its ``match`` block reads
``status: "voided"``, ``result: {"winner": None, "end": "void", "reason": ...}``
and ``void_reason``. Only live matches are voided: a flagged match that finishes
before the void runs stays finished.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_noop

import engine

from .models import Heartbeat, Match

log = logging.getLogger(__name__)

GAP = timedelta(seconds=5)

# Stored in void_reason (English source text); templates translate it when shown.
VOID_OUTAGE = gettext_noop(
    "A service fault stopped the server while the match clock was running, so the match "
    "is void. Ratings are unchanged."
)
VOID_STAFF = gettext_noop("Staff voided this match after a service fault. Ratings are unchanged.")


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def _covered(hb: Heartbeat) -> datetime:
    """Until when this process's silence is accounted for (its beat, or a charge)."""
    if hb.charged_through is not None and hb.charged_through > hb.last_beat:
        return hb.charged_through
    return hb.last_beat


def _newest(rows: Iterable[Heartbeat]) -> datetime | None:
    times = [_covered(r) for r in rows]
    return max(times) if times else None


# --- beats and the scan ------------------------------------------------------


def beat(kind: str, name: str | None = None, now: datetime | None = None) -> list[int]:
    """Record a beat of this process; flag the matches hit by a gap it ends.

    Returns the ids of the matches flagged.
    """
    name = name or process_name()
    now = now or timezone.now()
    with transaction.atomic():
        rows = list(Heartbeat.objects.select_for_update().order_by("pk"))
        gaps: list[datetime] = []
        everyone = _newest(rows)
        if everyone is not None and now - everyone > GAP:
            gaps.append(everyone)
        if kind == Heartbeat.Kind.WORKER:
            mine = _newest(r for r in rows if r.kind == Heartbeat.Kind.WORKER)
        else:
            mine = _newest(r for r in rows if r.name == name)
        if mine is not None and now - mine > GAP:
            gaps.append(mine)
        own = next((r for r in rows if r.name == name), None)
        if own is None:
            Heartbeat.objects.create(kind=kind, name=name, started_at=now, last_beat=now)
        else:
            own.kind, own.last_beat, own.active = kind, now, True
            own.save(update_fields=["kind", "last_beat", "active"])
        if not gaps:
            return []
        start = min(gaps)
        log.warning("heartbeat gap of %.1f s ended by %s", (now - start).total_seconds(), name)
        return flag_clock_ran_between(start, now, VOID_OUTAGE)


def scan(now: datetime | None = None) -> list[int]:
    """The fault scan: charge every expected process silent for more than 5 s.

    Returns the ids of the matches flagged.
    """
    now = now or timezone.now()
    flagged: list[int] = []
    with transaction.atomic():
        # Locking all rows (in one order, as beat() does) keeps two scans from
        # charging the same silence twice and a beat from racing a charge.
        rows = list(Heartbeat.objects.select_for_update().order_by("pk"))
        charged: list[Heartbeat] = []
        for hb in rows:
            if hb.kind == Heartbeat.Kind.WEB and hb.active and now - _covered(hb) > GAP:
                flagged += flag_clock_ran_between(_covered(hb), now, VOID_OUTAGE)
                charged.append(hb)
        workers = [r for r in rows if r.kind == Heartbeat.Kind.WORKER]
        pool = _newest(workers)
        if pool is not None and any(r.active for r in workers):
            if now - pool > GAP:
                flagged += flag_clock_ran_between(pool, now, VOID_OUTAGE)
                charged += [r for r in workers if r.active]
            else:
                # The pool runs tasks; a worker resting (or gone) is no fault.
                resting = [r.pk for r in workers if r.active and now - _covered(r) > GAP]
                Heartbeat.objects.filter(pk__in=resting).update(active=False)
        for hb in charged:
            log.warning("no heartbeat from %s %s since %s", hb.kind, hb.name, _covered(hb))
            hb.active, hb.charged_through = False, now
            hb.save(update_fields=["active", "charged_through"])
    return sorted(set(flagged))


def retire(name: str | None = None) -> None:
    """This process is stopping cleanly: it is no longer expected to beat."""
    Heartbeat.objects.filter(name=name or process_name()).update(active=False)


# --- flags -------------------------------------------------------------------------


def clock_may_have_run(m: Match, start_ms: int, last_event_ms: int | None) -> bool:
    """Whether live match ``m``'s clock may have run at some moment from ``start_ms`` on."""
    if last_event_ms is not None and last_event_ms >= start_ms:
        return True  # it changed since: not replayed, so assume it ran
    if m.state is None:
        return False
    return engine.deadline(engine.from_dict(m.state)) is not None


def flag_clock_ran_between(start: datetime, end: datetime, reason: str) -> list[int]:
    """Flag the live matches whose clock may have run between ``start`` and ``end``."""
    start_ms = _ms(start)
    candidates = (
        Match.objects.filter(status=Match.Status.LIVE, started_at__lte=end)
        .annotate(last_event_ms=Max("events__at_ms"))
        .only("pk", "state", "status")
    )
    ids = [m.pk for m in candidates if clock_may_have_run(m, start_ms, m.last_event_ms)]
    return flag(ids, reason)


def flag(match_ids: Iterable[int], reason: str = VOID_STAFF) -> list[int]:
    """Flag live matches for voiding (staff, or the fault scan); returns those newly flagged.

    The void itself is queued right after the commit (:func:`request_voiding`).
    """
    ids = sorted(set(match_ids))
    if not ids:
        return []
    done: list[int] = []
    with transaction.atomic():
        for m in (
            Match.objects.select_for_update()
            .filter(pk__in=ids, status=Match.Status.LIVE, flagged_for_void=False)
            .order_by("pk")
        ):
            m.flagged_for_void = True
            if not m.void_reason:
                m.void_reason = reason
            m.save(update_fields=["flagged_for_void", "void_reason"])
            done.append(m.pk)
        if done:
            log.warning("matches flagged for voiding: %s", done)
            transaction.on_commit(request_voiding)
    return done


def request_voiding() -> None:
    """Void the flagged matches now: on a Celery worker, or here in the embedded default."""
    if getattr(settings, "MATCH_TIMERS", "asyncio") == "celery":
        from .tasks import void_flagged_matches

        void_flagged_matches.delay()
    else:
        void_flagged()


# --- voids ---------------------------------------------------------------------------


def void_flagged() -> list[int]:
    """Void every flagged live match; returns the ids voided."""
    ids = Match.objects.filter(status=Match.Status.LIVE, flagged_for_void=True).values_list(
        "pk", flat=True
    )
    return [pk for pk in list(ids) if void_match(pk)]


def void_match(match_id: int) -> bool:
    """Void one flagged live match (idempotent): no winner, no rating change, seats told."""
    from . import services

    with transaction.atomic():
        m = Match.objects.select_for_update().filter(pk=match_id).first()
        if m is None or m.status != Match.Status.LIVE or not m.flagged_for_void:
            return False
        now = services.now_ms()
        m.status = Match.Status.VOIDED
        m.end_reason = "void"
        m.winner_seat = None
        m.finished_at = timezone.now()
        m.ready_deadline_ms = None
        if not m.void_reason:
            m.void_reason = VOID_OUTAGE
        state = engine.from_dict(m.state) if m.state is not None else None
        # _save bumps the version, appends the event and pushes both views after the commit.
        services._save(m, state, [{"type": "voided", "reason": m.void_reason, "t": now}])
    log.warning("match %s voided: %s", match_id, m.void_reason)
    return True


def scan_and_void(now: datetime | None = None) -> list[int]:
    """One pass of the periodic fault job: the scan, then any flagged match voided."""
    scan(now)
    return void_flagged()
