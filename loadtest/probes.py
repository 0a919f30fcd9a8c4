"""Single-purpose measurements: the echo baseline, the login flood, idle lobby sockets.

- :func:`echo`: client A sends on ``/ws/echo/<room>/``, the server ``group_send``s
  to the room, client B receives (matches/echo.py, on when ``BENCH_ECHO=1``): the
  floor that Daphne and the channel layer set under a move's latency.
- :func:`login_flood`: workers posting wrong passwords to ``/accounts/login/``,
  one request at a time each, until told to stop.
- :class:`LobbySocket`: an idle, logged-in ``/ws/lobby/`` socket that pings every
  10 s as the lobby page does (static/js/queue.js) and reconnects when closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections import Counter

import aiohttp

from .bots import BACKOFF_S, CLOSE_FINAL, Account, Recorder

LOBBY_PING_S = 10.0  # as static/js/queue.js


async def echo(
    fleet_ws: aiohttp.ClientSession,
    base: str,
    a: Account,
    b: Account,
    count: int,
    gap_s: float = 0.01,
) -> list[float]:
    """``count`` relays A → server → B, one at a time; each one's ms."""
    ws_base = "ws" + base.removeprefix("http")
    url = f"{ws_base}/ws/echo/{uuid.uuid4().hex[:12]}/"
    sockets = [
        await fleet_ws.ws_connect(
            url, headers={"Cookie": f"sessionid={acct.sessionid}"}, origin=base
        )
        for acct in (a, b)
    ]
    sender, receiver = sockets
    times = []
    try:
        for i in range(count):
            text = f"{i}"
            t0 = time.monotonic()
            await sender.send_str(text)
            while (await receiver.receive_str(timeout=10)) != text:
                pass
            times.append((time.monotonic() - t0) * 1000)
            await asyncio.sleep(gap_s)
    finally:
        for ws in sockets:
            await ws.close()
    return times


async def login_flood(
    http: aiohttp.ClientSession, base: str, username: str, workers: int, stop: asyncio.Event
) -> Counter[int]:
    """Wrong-password logins until ``stop``; the answers' status codes counted."""
    statuses: Counter[int] = Counter()

    async def worker() -> None:
        async with http.get(base + "/accounts/login/") as r:
            await r.read()
            token = r.cookies["csrftoken"].value
        form = {"username": username, "password": "not-the-password", "csrfmiddlewaretoken": token}
        while not stop.is_set():
            try:
                async with http.post(
                    base + "/accounts/login/", data=form, headers={"Cookie": f"csrftoken={token}"}
                ) as r:
                    await r.read()
                    statuses[r.status] += 1
            except (TimeoutError, aiohttp.ClientError):
                statuses[0] += 1

    await asyncio.gather(*(worker() for _ in range(workers)))
    return statuses


class LobbySocket:
    """One idle lobby page: connected, pinging, reconnecting."""

    def __init__(
        self, ws_session: aiohttp.ClientSession, base: str, acct: Account, rec: Recorder
    ) -> None:
        self.session = ws_session
        self.base = base
        self.url = "ws" + base.removeprefix("http") + "/ws/lobby/"
        self.acct = acct
        self.rec = rec
        self.connected = False
        self.stopping = False
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        backoff = BACKOFF_S[0]
        while not self.stopping:
            try:
                ws = await self.session.ws_connect(
                    self.url,
                    headers={"Cookie": f"sessionid={self.acct.sessionid}"},
                    origin=self.base,
                )
            except (TimeoutError, aiohttp.ClientError) as exc:
                code = getattr(exc, "status", None)
                self.rec.error(f"ws_connect_{code}" if code else "ws_connect")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_S[1])
                continue
            self.ws = ws
            pinger = asyncio.ensure_future(self._ping(ws))
            try:
                async for msg in ws:
                    if msg.type == aiohttp.WSMsgType.TEXT:
                        self.connected = True
                        backoff = BACKOFF_S[0]
                        frame = json.loads(msg.data)
                        if frame.get("type") == "error":
                            self.rec.error(str(frame.get("code")))
                    elif msg.type == aiohttp.WSMsgType.ERROR:
                        break
            except (TimeoutError, aiohttp.ClientError):
                pass
            finally:
                pinger.cancel()
            self.connected = False
            if self.stopping:
                break
            if ws.close_code in CLOSE_FINAL:
                self.rec.error(f"close_{ws.close_code}")
                break
            self.rec.drops.append((time.monotonic(), ws.close_code))
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_S[1])

    async def _ping(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        # Pages opened at different moments ping at different moments.
        await asyncio.sleep(random.uniform(0, LOBBY_PING_S))
        while not ws.closed:
            await ws.send_str('{"op":"ping"}')
            await asyncio.sleep(LOBBY_PING_S)

    async def close(self) -> None:
        self.stopping = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
