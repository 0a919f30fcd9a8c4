"""Two web processes serve one site: a match whose seats sit on different processes.

Each process is ``python -m config.serve`` with the Redis channel layer; alice's
socket is on one, bob's on the other, and every move one of them makes reaches
the other through Redis, in order, once.
"""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from tests.processes import Client, WebProcess, session_cookie
from tests.webtier.conftest import legal_frame, new_casual

pytestmark = pytest.mark.django_db(transaction=True)

DECISIONS = 12


async def test_a_match_with_its_seats_on_two_web_processes_is_played_through_redis(
    web_pair: tuple[WebProcess, WebProcess], alice: Any, bob: Any
) -> None:
    web_a, web_b = web_pair
    match = await database_sync_to_async(new_casual)(alice, bob)
    cookies = [await database_sync_to_async(session_cookie)(u) for u in (alice, bob)]
    sockets = [
        await Client.open(web_a.url, match.pk, cookies[0]),
        await Client.open(web_b.url, match.pk, cookies[1]),
    ]
    try:
        for s in sockets:
            first = await s.recv()
            assert first["type"] == "state" and first["version"] == 0
        await sockets[0].send({"op": "start", "version": 0})
        await sockets[1].send({"op": "start", "version": 0})
        views = [(await s.state_at(2))["view"] for s in sockets]
        version = 2
        for _ in range(DECISIONS):
            actor = next(i for i, v in enumerate(views) if legal_frame(v, version))
            await sockets[actor].send(legal_frame(views[actor], version))  # type: ignore[arg-type]
            frames = [await s.recv() for s in sockets]
            for f in frames:
                # Each seat hears the change once, as the very next frame, at the next version.
                assert f["type"] == "state" and f["version"] == version + 1, f
            version += 1
            views = [f["view"] for f in frames]
            if views[0]["phase"] not in ("auction", "play"):
                break
        assert version > 2 + 3  # moves went both ways across the two processes
        seen = [[f["version"] for f in s.frames if f["type"] == "state"] for s in sockets]
        for versions in seen:
            assert versions == sorted(set(versions))  # in order, none twice
    finally:
        for s in sockets:
            await s.close()
