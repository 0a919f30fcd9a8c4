"""The small synchronous Redis client of a web process's threads (``None`` without ``REDIS_URL``).

Shared by the pulses (``matches.clock.liveness``) and admission control
(``matches.play.admission``), which sits below the clock and so cannot ask it.
"""

from __future__ import annotations

import threading
from typing import Any

from matches import conf

_clients: dict[str, Any] = {}
_client_lock = threading.Lock()


def client() -> Any:
    """One client per URL, with short timeouts: a pulse must never hang its thread."""
    url = conf.redis_url()
    if not url:
        return None
    with _client_lock:
        if url not in _clients:
            import redis

            _clients[url] = redis.Redis.from_url(
                url, socket_timeout=1, socket_connect_timeout=1, health_check_interval=10
            )
        return _clients[url]
