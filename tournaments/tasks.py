"""Celery tasks of the arenas (beat: config/settings.py ``CELERY_BEAT_SCHEDULE``).

The embedded default runs the same jobs on the web process's loop (tournaments/periodic.py).
"""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def arena_pairing() -> int:
    """Every 2 s: late results, arenas' ends, and the pairing pass; the matches made."""
    from .services import pairing_pass

    return sum(len(r.paired) for r in pairing_pass().values())


@shared_task(ignore_result=True)
def arena_standings() -> int:
    """Every second: one standings push per arena that changed."""
    from .push import push_standings

    return len(push_standings())


@shared_task(ignore_result=True)
def arena_schedule() -> int:
    """Every minute: the hourly and evening arenas, made ahead."""
    from .schedule import ensure_schedule

    return len(ensure_schedule())
