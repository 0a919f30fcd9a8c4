"""A burst of wrong-password logins while a match is played on the same web process.

Password hashing runs on its own low-priority thread and match work on the
match threads (matches/play/db.py), so 50 wrong passwords from several threads never
stop a move: every move of the match is applied and pushed to both seats, in
order, while the burst runs.
"""

from __future__ import annotations

import asyncio
import re
import threading
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from typing import Any

import pytest
from channels.db import database_sync_to_async

from tests.processes import Client, WebProcess, session_cookie
from tests.webtier.conftest import legal_frame, new_casual

pytestmark = pytest.mark.django_db(transaction=True)

ATTEMPTS, THREADS = 50, 5


def _wrong_login(base: str, username: str) -> int:
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(base + "/accounts/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    data = urllib.parse.urlencode(
        {"username": username, "password": "wrong-password", "csrfmiddlewaretoken": token[1]}
    ).encode()
    req = urllib.request.Request(base + "/accounts/login/", data=data, headers={"Referer": base})
    try:
        return int(opener.open(req, timeout=60).status)
    except urllib.error.HTTPError as e:
        return int(e.code)


async def test_every_move_is_applied_and_pushed_in_order_during_a_login_burst(
    embedded_web: WebProcess, alice: Any, bob: Any
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    cookies = [await database_sync_to_async(session_cookie)(u) for u in (alice, bob)]
    sockets = [await Client.open(embedded_web.url, match.pk, c) for c in cookies]
    statuses: list[int] = []
    names = iter([f"user{i % 7}" for i in range(ATTEMPTS)])
    lock = threading.Lock()

    def flood() -> None:
        while True:
            with lock:
                name = next(names, None)
            if name is None:
                return
            statuses.append(_wrong_login(embedded_web.url, name))

    threads = [threading.Thread(target=flood) for _ in range(THREADS)]
    try:
        for s in sockets:
            await s.recv()
        for s in sockets:
            await s.send({"op": "start", "version": 0})
        views = [(await s.state_at(2))["view"] for s in sockets]
        version, moves = 2, 0
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads) or moves < 10:
            actor = next((i for i, v in enumerate(views) if legal_frame(v, version)), None)
            if actor is None:
                break  # the hand or the match ended: enough moves were checked
            await sockets[actor].send(legal_frame(views[actor], version))  # type: ignore[arg-type]
            frames = [await s.recv() for s in sockets]
            assert [f["version"] for f in frames] == [version + 1] * 2, frames
            version, moves = version + 1, moves + 1
            views = [f["view"] for f in frames]
        assert moves >= 10
    finally:
        await asyncio.get_running_loop().run_in_executor(None, lambda: [t.join() for t in threads])
        for s in sockets:
            await s.close()
    assert len(statuses) == ATTEMPTS
    # Wrong passwords are refused (the form again, then the lockout page), never accepted.
    assert set(statuses) <= {200, 429}, statuses
