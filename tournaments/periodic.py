"""The arenas' periodic jobs on the embedded default's loop (``matches.realtime.periodic``).

With Celery (``REDIS_URL``) beat runs the same three as tasks (tournaments/tasks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PAIRING_S = 2.0
STANDINGS_S = 1.0
SCHEDULE_S = 60.0


def jobs() -> list[tuple[float, Callable[..., Any]]]:
    from .push import push_standings
    from .schedule import ensure_schedule
    from .services import pairing_pass

    return [(PAIRING_S, pairing_pass), (STANDINGS_S, push_standings), (SCHEDULE_S, ensure_schedule)]
