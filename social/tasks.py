"""Celery tasks of social (used when ``REDIS_URL`` is set)."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def push_turns() -> int:
    """Every 3 s (Celery beat): "your turn" by Web Push to hidden pages (social/turns.py)."""
    from .turns import push_turns as run

    return run()
