"""A bot token on two web processes behind one Redis: one revocation, one rate limit.

The owner revokes the token through one process while the bot's socket sits on
the other: the revocation travels through the Redis channel layer and that
socket closes with 4401. The per-token limit is counted in Redis, so calls
spread over both processes share it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async

from tests.botacct.conftest import make_bot
from tests.botacct.wire import api, revoke_in_browser
from tests.processes import WebProcess, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10
RATE = 5  # calls a minute per token, for this test


@pytest.fixture
def two_processes(redis_env: dict[str, str], tmp_path: Path) -> Iterator[list[WebProcess]]:
    env = {**redis_env, "BOT_TOKEN_RATE": f"{RATE}/m"}
    procs = [WebProcess(tmp_path, "web-a", env), WebProcess(tmp_path, "web-b", env)]
    try:
        yield [p.start() for p in procs]
    finally:
        for p in procs:
            p.stop()


def status_of(server: str, token: str) -> int:
    return api(server, "/api/matches/live/", token)[0]


async def test_a_revocation_on_one_process_closes_the_socket_on_the_other(
    two_processes: list[WebProcess],
) -> None:
    a, b = two_processes
    bot, token = await database_sync_to_async(make_bot)("robo")
    ws = await websockets.connect(
        b.url.replace("http", "ws", 1) + "/ws/lobby/",
        additional_headers={"Authorization": f"Bearer {token}"},
        open_timeout=WAIT_S,
    )
    assert json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))["type"] == "queue"
    # The owner revokes it on process a's profile page; the word goes out through Redis.
    cookie = await database_sync_to_async(session_cookie)(bot)
    assert await asyncio.to_thread(revoke_in_browser, a.url, "robo", cookie) == 302
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(ws.recv(), WAIT_S)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    assert await asyncio.to_thread(status_of, a.url, token) == 401


def test_the_limit_is_shared_by_both_processes(two_processes: list[WebProcess], db: Any) -> None:
    a, b = two_processes
    _robo, token = make_bot("robo")
    _droid, other = make_bot("droid")
    answers = [status_of((a, b)[i % 2].url, token) for i in range(RATE)]
    assert answers == [200] * RATE
    assert status_of(a.url, token) == 429
    assert status_of(b.url, token) == 429
    assert status_of(b.url, other) == 200  # another token has its own count
