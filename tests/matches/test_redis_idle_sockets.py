"""On the Redis channel layer, an idle socket lives on and still gets the next push.

redis-py gives every connection a 5 s read timeout by default while
channels-redis waits for messages with a 5 s BRPOP, so a process that had
nothing to deliver for 5 s lost the race, its consumer died with
``Timeout reading from 127.0.0.1:6379`` and the browser's socket closed with
1011. The layer is configured exactly as production configures it
(``config.settings.redis_channel_layer``), with this run's own prefix.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async
from matchplay import new_casual
from wsclient import open_socket

from config.settings import redis_channel_layer
from matches.lobby import matchmaking as queue
from matches.play import timing
from matches.play.act import act
from tests.support import connect_lobby

IDLE_S = 15  # three times the BRPOP (and the old read timeout) of 5 s


@pytest.fixture
def redis_layer(require_redis: str, settings: Any) -> str:
    settings.CHANNEL_LAYERS = {
        "default": redis_channel_layer(require_redis, prefix=f"sbidle{uuid.uuid4().hex[:8]}")
    }
    settings.MATCH_BACKGROUND = False
    return require_redis


@pytest.mark.django_db(transaction=True)
async def test_an_idle_match_socket_and_lobby_socket_still_receive_the_next_push(
    redis_layer: str, alice: Any, bob: Any, carol: Any
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    sock = await open_socket(match.pk, alice)
    lobby = await connect_lobby(carol)
    try:
        first = await lobby.receive_json_from(timeout=10)
        assert first["type"] == "queue" and first["in_queue"] is False

        # Nothing to deliver for 15 s: both consumers must still be alive after it.
        assert await sock.comm.receive_nothing(timeout=IDLE_S, interval=0.2)
        assert await lobby.receive_nothing(timeout=0.1)

        # The opponent presses 開始 from elsewhere: the match socket hears it.
        await database_sync_to_async(act)(
            match.pk, bob, {"op": "start", "version": 0}, timing.now_ms()
        )
        pushed = await sock.state_at(1)
        assert pushed["view"]["match"]["ready"] == [False, True]

        # And the lobby socket hears its own queue change.
        await database_sync_to_async(queue.join)(carol, pair=False)
        update = await lobby.receive_json_from(timeout=10)
        assert update["type"] == "queue" and update["in_queue"] is True
    finally:
        await sock.comm.disconnect()
        await lobby.disconnect()
