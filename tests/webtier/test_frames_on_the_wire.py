"""Hostile frames against a real Daphne (docs/protocol.md, "Client → server").

Up to the transport limit (64 KiB) an oversized frame is answered with
``too_large`` and the socket lives on; beyond it the socket is closed with 1009
("message too big"). Nested JSON far past any sense is a ``bad_request``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from tests.processes import Client, WebProcess, session_cookie
from tests.webtier.conftest import new_casual

pytestmark = pytest.mark.django_db(transaction=True)


async def _error(client: Client, text: str) -> dict[str, Any]:
    await client.ws.send(text)
    frame = await client.recv()
    assert frame["type"] == "error", frame
    return frame


async def test_oversized_and_nested_frames_get_error_frames_and_huge_ones_close_1009(
    embedded_web: WebProcess, alice: Any, bob: Any
) -> None:
    import websockets

    match = await database_sync_to_async(new_casual)(alice, bob)
    cookie = await database_sync_to_async(session_cookie)(alice)
    c = await Client.open(embedded_web.url, match.pk, cookie, max_size=2**22)
    try:
        assert (await c.recv())["type"] == "state"
        # 4,096 bytes of UTF-8 is the limit, not 4,096 characters: 1,400 × "あ" is 4,200 bytes.
        pad = "あ" * 1_400
        big = json.dumps({"op": "sync", "pad": pad}, ensure_ascii=False)
        assert len(big) < 4_096 < len(big.encode())
        assert (await _error(c, big))["code"] == "too_large"
        assert (await _error(c, "x" * 60_000))["code"] == "too_large"
        nested = "[" * 1_000 + "]" * 1_000
        assert len(nested) < 4_096
        assert (await _error(c, nested))["code"] == "bad_request"
        assert (await _error(c, '{"op": "start", "version": "0"}'))["code"] == "bad_request"
        # Still alive and unchanged: a sync answers with version 0.
        await c.send({"op": "sync"})
        assert (await c.state_at(0))["version"] == 0
        # Past the transport limit the socket is closed with 1009.
        await c.ws.send("y" * (1024 * 1024))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await c.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    finally:
        await c.close()
