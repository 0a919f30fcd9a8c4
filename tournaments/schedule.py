"""The arenas' own schedule: an hourly arena, and a daily one at 21:00 Japan time.

:func:`ensure_schedule` (every minute: Celery beat, or the embedded default's
loop) creates the coming ones ahead, idempotently: the next
:data:`HOURLY_AHEAD` hourly arenas (60 minutes each, rated) and the next
evening arena (21:00–22:30 JST, rated). An hourly arena that would start while
the evening one runs (21:00, 22:00 JST) is not made: the evening is for that one.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone

from .models import Arena

JST = ZoneInfo("Asia/Tokyo")
HOURLY_AHEAD = 2
HOURLY_MINUTES = 60
DAILY_HOUR = 21
DAILY_MINUTES = 90


def _daily_start(after: datetime) -> datetime:
    local = after.astimezone(JST)
    start = local.replace(hour=DAILY_HOUR, minute=0, second=0, microsecond=0)
    if start <= local:
        start += timedelta(days=1)
    return start


def _in_evening(start: datetime) -> bool:
    local = start.astimezone(JST)
    ev = local.replace(hour=DAILY_HOUR, minute=0, second=0, microsecond=0)
    return ev <= local < ev + timedelta(minutes=DAILY_MINUTES)


def planned(now: datetime) -> list[tuple[str, datetime, int]]:
    """``(origin, starts_at, minutes)`` of the scheduled arenas that should exist by now."""
    top = now.astimezone(JST).replace(minute=0, second=0, microsecond=0)
    out = []
    for i in range(1, HOURLY_AHEAD + 1):
        start = top + timedelta(hours=i)
        if not _in_evening(start):
            out.append((Arena.Origin.HOURLY, start, HOURLY_MINUTES))
    out.append((Arena.Origin.DAILY, _daily_start(now), DAILY_MINUTES))
    return out


def ensure_schedule(now: datetime | None = None) -> list[int]:
    """Create the planned arenas that do not exist yet; the ids created."""
    now = now or timezone.now()
    made = []
    for origin, start, minutes in planned(now):
        if Arena.objects.filter(origin=origin, starts_at=start).exists():
            continue
        local = start.astimezone(JST)
        name = f"{'Hourly' if origin == Arena.Origin.HOURLY else 'Evening'} {local:%H:%M} JST"
        try:
            with transaction.atomic():
                a = Arena.objects.create(
                    name=name, starts_at=start, minutes=minutes, rated=True, origin=origin
                )
        except IntegrityError:
            continue  # another process made it meanwhile
        made.append(a.pk)
    return made
