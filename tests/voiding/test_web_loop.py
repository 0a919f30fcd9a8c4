"""The web process's background loop (matches/realtime/periodic.py): beats, and in the
embedded default also sweeps the queue and scans for faults."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async

from matches.clock import liveness
from matches.lobby import matchmaking as queue
from matches.models import Heartbeat
from matches.realtime import periodic
from tests.support import connect_lobby

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 8.0


@pytest.fixture
async def background(settings: Any) -> AsyncIterator[None]:
    settings.MATCH_BACKGROUND = True
    yield
    await periodic.stop()


async def _until(check: Any) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + DEADLINE_S
    while not await database_sync_to_async(check)():
        assert loop.time() < end, "not within the deadline"
        await asyncio.sleep(0.05)


async def test_the_first_socket_starts_the_web_heartbeat(alice: Any, background: None) -> None:
    comm = await connect_lobby(alice)
    try:
        name = liveness.process_name()
        await _until(lambda: Heartbeat.objects.filter(name=name, kind="web", active=True).exists())
    finally:
        await comm.disconnect()


async def test_the_embedded_sweep_pairs_waiting_players_and_sends_both_to_the_match(
    alice: Any, bob: Any, background: None
) -> None:
    await database_sync_to_async(queue.join)(alice, pair=False)
    await database_sync_to_async(queue.join)(bob, pair=False)
    a, b = await connect_lobby(alice), await connect_lobby(bob)
    try:
        got = []
        for comm in (a, b):
            while True:
                frame = json.loads(await comm.receive_from(timeout=DEADLINE_S))
                if frame["type"] == "paired":
                    got.append(frame["match_id"])
                    break
        assert got[0] == got[1]
    finally:
        await a.disconnect()
        await b.disconnect()
