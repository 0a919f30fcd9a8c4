"""Celery tasks (used when ``REDIS_URL`` is set).

Deadlines are not tasks: the sweeper thread of every worker finds them in the
database (``matches.clock.sweeper``, started by ``SweeperStep`` in config/celery.py).
"""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def matchmaking_sweep() -> int:
    """Every 2 s (Celery beat): drop absent and busy queue entries, pair whoever fits."""
    from matches.lobby.matchmaking import sweep

    return len(sweep())
