"""Celery tasks (used when ``REDIS_URL`` is set)."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True, acks_late=True)
def check_match(match_id: int, version: int) -> bool:
    """The deadline backstop for one match at one version (idempotent)."""
    from .services import check_match as check

    return check(match_id, version)
