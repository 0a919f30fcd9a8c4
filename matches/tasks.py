"""Celery tasks (used when ``REDIS_URL`` is set)."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True, acks_late=True)
def check_match(match_id: int, version: int) -> bool:
    """The deadline backstop for one match at one version (idempotent)."""
    from .services import check_match as check

    return check(match_id, version)


# --- ranked queue and service-fault voiding (run by Celery beat: CELERY_BEAT_SCHEDULE) ---


@shared_task(ignore_result=True)
def matchmaking_sweep() -> int:
    """Every 2 s: drop absent and busy queue entries, pair whoever fits (matches.queue)."""
    from .queue import sweep

    return len(sweep())


@shared_task(ignore_result=True)
def heartbeat() -> int:
    """Every 1 s: the workers' heartbeat; ends (and charges) a gap if there was one."""
    from .models import Heartbeat
    from .voiding import beat

    return len(beat(Heartbeat.Kind.WORKER))


@shared_task(ignore_result=True)
def fault_scan() -> int:
    """Every 2 s: charge silent processes, flag the matches hit, void the flagged ones."""
    from .voiding import scan_and_void

    return len(scan_and_void())


@shared_task(ignore_result=True, acks_late=True)
def void_flagged_matches() -> int:
    """Void every flagged live match (queued right after a flag commits; idempotent)."""
    from .voiding import void_flagged

    return len(void_flagged())
