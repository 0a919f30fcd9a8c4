"""A push to a socket whose closing has begun is dropped quietly, never an application error.

A web process that stops closes its sockets with 1012 and answers the frames still in
hand; Daphne's transport refuses to send on a socket already closing
(``autobahn.exception.Disconnected``), and the consumer died with "Exception inside
application" logged at ERROR, in every drill. The move itself is committed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from autobahn.exception import Disconnected
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from wsclient import login_headers

import engine
from config.asgi import application
from matches.models import Match
from matches.play import timing
from matches.play.act import act
from tests.support import frame_for, live_casual

pytestmark = pytest.mark.django_db(transaction=True)


def _someone_moves(match_id: int, users: tuple[Any, Any]) -> int:
    m = Match.objects.get(pk=match_id)
    action = engine.legal_actions(engine.from_dict(m.state))[0]
    out = act(match_id, users[action.player], frame_for(action, m.version), timing.now_ms())
    assert out.error is None and out.change is not None
    return m.version + 1


async def test_a_push_to_a_closing_socket_is_dropped_and_the_socket_lives_on(
    alice: Any, bob: Any, caplog: pytest.LogCaptureFixture
) -> None:
    match = await database_sync_to_async(live_casual)(alice, bob)
    closing = asyncio.Event()
    refused: list[dict[str, Any]] = []
    another_refused = asyncio.Event()

    async def daphne(scope: Any, receive: Any, send: Any) -> None:
        async def transport_send(message: dict[str, Any]) -> None:
            if closing.is_set() and message["type"] == "websocket.send":
                refused.append(message)
                another_refused.set()
                raise Disconnected("Attempt to send on a closed protocol")
            await send(message)

        await application(scope, receive, transport_send)

    headers = await database_sync_to_async(login_headers)(alice)
    comm = WebsocketCommunicator(daphne, f"/ws/matches/{match.pk}/", headers=headers)
    connected, _ = await comm.connect(timeout=10)
    assert connected
    try:
        await comm.receive_json_from(timeout=10)  # the whole view
        closing.set()
        with caplog.at_level(logging.DEBUG):
            version = await database_sync_to_async(_someone_moves)(match.pk, (alice, bob))
            await asyncio.wait_for(another_refused.wait(), 10)
            assert json.loads(refused[0]["text"])["version"] == version
            # The consumer is still there (it did not die on the refused send)…
            another_refused.clear()
            await comm.send_json_to({"op": "sync"})
            await asyncio.wait_for(another_refused.wait(), 10)
            assert len(refused) == 2 and json.loads(refused[1]["text"])["type"] == "state"
            assert not comm.future.done()
        # …and nothing was logged as an error.
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert (await database_sync_to_async(Match.objects.get)(pk=match.pk)).version == version
    finally:
        await comm.disconnect()
