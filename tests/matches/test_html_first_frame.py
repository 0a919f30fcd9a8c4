"""A page that connects showing the current version is sent only its clocks and status.

The match page is drawn whole by the server; its socket's first frame used to draw
every part again, which the browser then swapped for itself (Lighthouse: the match
page's longest task). match.html says which version it shows (``seen``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from matchplay import new_casual
from wsclient import login_headers, open_socket

from config.asgi import application
from matches.ui.fragments import FRAGMENTS, TIMED

pytestmark = pytest.mark.django_db(transaction=True)


async def _page_socket(match_id: int, user: Any, seen: int | None) -> WebsocketCommunicator:
    headers = await database_sync_to_async(login_headers)(user)
    url = f"/ws/matches/{match_id}/?format=html" + ("" if seen is None else f"&seen={seen}")
    comm = WebsocketCommunicator(application, url, headers=headers)
    connected, _ = await comm.connect(timeout=10)
    assert connected
    return comm


def _ids(html: str) -> set[str]:
    return set(re.findall(r'<[a-z]+ id="(sb-[a-z-]+)"[^>]*hx-swap-oob', html))


async def test_a_page_at_the_current_version_gets_only_the_parts_drawn_from_the_clock(
    alice: Any, bob: Any
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    a = await open_socket(match.pk, alice)
    await a.send({"op": "start", "version": 0})
    await a.state_at(1)
    page = await _page_socket(match.pk, bob, seen=1)
    stale = await _page_socket(match.pk, bob, seen=0)  # drawn before alice pressed 開始
    plain = await _page_socket(match.pk, bob, seen=None)  # a client that does not say
    try:
        first = await page.receive_from(timeout=10)
        assert _ids(first) == set(TIMED) and 'data-version="1"' in first
        every = {fid for fid, _ in FRAGMENTS}
        assert _ids(await stale.receive_from(timeout=10)) == every
        assert _ids(await plain.receive_from(timeout=10)) == every
        # Afterwards that page gets what changes, as any: bob's 開始 starts the match.
        await page.send_to(text_data='{"op": "start", "version": 1}')
        moved = ""
        while 'data-version="2"' not in moved:
            moved += await page.receive_from(timeout=10)
        assert {"sb-status", "sb-board", "sb-hand"} <= _ids(moved)
    finally:
        for c in (page, stale, plain):
            await c.disconnect()
        await a.comm.disconnect()


async def test_a_page_number_that_is_not_a_version_is_ignored(alice: Any, bob: Any) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    # "²" and "¹" (percent-encoded UTF-8): digits to str.isdigit() that int() refuses.
    for seen in ("-1", "x", "9" * 12, "0x0", "%C2%B2", "%C2%B9"):
        headers = await database_sync_to_async(login_headers)(bob)
        comm = WebsocketCommunicator(
            application, f"/ws/matches/{match.pk}/?format=html&seen={seen}", headers=headers
        )
        connected, _ = await comm.connect(timeout=10)
        assert connected
        assert _ids(await comm.receive_from(timeout=10)) == {fid for fid, _ in FRAGMENTS}
        await comm.disconnect()
