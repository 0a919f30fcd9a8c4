"""The echo relay behind the harness's baseline: on only with BENCH_ECHO."""

from __future__ import annotations

from typing import Any

import channels.consumer
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from tests.matches.wsclient import login_headers

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(room: str, user: Any) -> tuple[WebsocketCommunicator, bool]:
    headers = await database_sync_to_async(login_headers)(user)
    comm = WebsocketCommunicator(application, f"/ws/echo/{room}/", headers=headers)
    connected, _ = await comm.connect(timeout=5)
    return comm, connected


async def test_what_one_socket_sends_reaches_the_other_and_not_itself(
    alice: Any, bob: Any, settings: Any
) -> None:
    settings.BENCH_ECHO = True
    a, ok_a = await connect("r1", alice)
    b, ok_b = await connect("r1", bob)
    assert ok_a and ok_b
    try:
        await a.send_to(text_data="hello 1")
        assert await b.receive_from(timeout=5) == "hello 1"
        assert await a.receive_nothing(timeout=0.2)
    finally:
        await a.disconnect()
        await b.disconnect()


async def test_it_relays_as_a_match_socket_does_without_a_thread_hop_per_message(
    alice: Any, bob: Any, settings: Any, monkeypatch: Any
) -> None:
    """The floor it measures is a move's: the match sockets' dispatch (LayerSafe), not
    Channels' own, which closes old database connections on a thread before every
    message (a quarter of a relay's CPU under load)."""
    settings.BENCH_ECHO = True
    hops = []

    async def counted() -> None:
        hops.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    a, _ = await connect("r4", alice)
    b, _ = await connect("r4", bob)
    try:
        for i in range(3):
            await a.send_to(text_data=f"move {i}")
            assert await b.receive_from(timeout=5) == f"move {i}"
        assert hops == []
    finally:
        await a.disconnect()
        await b.disconnect()


async def _close_code(comm: WebsocketCommunicator) -> int:
    message = await comm.receive_output(timeout=5)
    assert message["type"] == "websocket.close", message
    return int(message["code"])


async def test_it_is_refused_unless_switched_on(alice: Any, settings: Any) -> None:
    settings.BENCH_ECHO = False
    comm, connected = await connect("r2", alice)
    assert connected and await _close_code(comm) == 4403  # accepted, then closed
    await comm.disconnect()


async def test_it_is_refused_to_anonymous_sockets(settings: Any) -> None:
    settings.BENCH_ECHO = True
    comm, connected = await connect("r3", None)
    assert connected and await _close_code(comm) == 4401
    await comm.disconnect()
