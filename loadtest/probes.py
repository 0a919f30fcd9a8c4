"""Single-purpose measurements: the echo baseline, the login flood, idle lobby sockets.

- :func:`echo`: client A sends on ``/ws/echo/<room>/``, the server ``group_send``s
  to the room, client B receives (matches/realtime/echo.py, on when ``BENCH_ECHO=1``): the
  floor that Daphne and the channel layer set under a move's latency.
- :class:`EchoLoad`: many pairs relaying at once, at a move load's rate: the server's
  CPU per relay is the transport's own cost, beside which a move's is read.
- :func:`login_flood`: workers posting wrong passwords to ``/accounts/login/``,
  one request at a time each, until told to stop.
- :func:`durable_commit`: the bare round trip of a one-row ``UPDATE`` and its ``COMMIT``
  on the set-up's PostgreSQL (made durable, as a move's is): the floor under a move's
  own transaction.
- :class:`LobbySocket`: an idle, logged-in ``/ws/lobby/`` socket that pings every
  10 s as the lobby page does (static/js/queue.js) and reconnects when closed.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import Counter
from typing import Any

import aiohttp

from .bots import Account, Socket

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


class EchoLoad:
    """Many pairs relaying at once, A → server → B, ``per_s`` relays a second in all:
    the transport's own work (a frame in, a ``group_send``, a frame out) at a move
    load's rate, with no match behind it. The server's CPU over a window of it, per
    relay, is what carrying one frame costs; a move carries three (its frame in, and
    each seat's frame out) and commits a transaction besides."""

    def __init__(
        self, fleet_ws: aiohttp.ClientSession, base: str, pairs: list[tuple[Account, Account]]
    ) -> None:
        self.ws, self.base, self.pairs = fleet_ws, base, pairs
        self.sockets: list[tuple[Any, Any]] = []
        self.tasks: list[asyncio.Future[None]] = []
        self.received = 0
        self.counting = False

    async def connect(self) -> None:
        """Every pair's two sockets, open (a few handshakes at a time), each receiver read."""
        ws_base = "ws" + self.base.removeprefix("http")
        gate = asyncio.Semaphore(8)

        async def one(a: Account, b: Account) -> None:
            url = f"{ws_base}/ws/echo/{uuid.uuid4().hex[:12]}/"
            async with gate:
                pair = tuple(
                    [
                        await self.ws.ws_connect(
                            url, headers={"Cookie": f"sessionid={acct.sessionid}"}, origin=self.base
                        )
                        for acct in (a, b)
                    ]
                )
            self.sockets.append(pair)
            self.tasks.append(asyncio.ensure_future(self._read(pair[1])))

        await asyncio.gather(*(one(a, b) for a, b in self.pairs))

    async def _read(self, receiver: Any) -> None:
        async for _message in receiver:
            if self.counting:
                self.received += 1

    def start(self, per_s: float) -> None:
        """Relays from now on, each pair at a random phase, then evenly; counted."""
        gap = len(self.sockets) / per_s

        async def send(sender: Any) -> None:
            await asyncio.sleep(random.uniform(0, gap))
            while True:
                await sender.send_str("x" * 64)
                await asyncio.sleep(gap)

        self.received, self.counting = 0, True
        self.tasks += [asyncio.ensure_future(send(sender)) for sender, _ in self.sockets]

    async def stop(self) -> int:
        """Stop sending, close every socket; the relays received since :meth:`start`."""
        self.counting = False
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await asyncio.gather(*(ws.close() for pair in self.sockets for ws in pair))
        return self.received


def durable_commit(database_url: str, count: int = 200) -> list[float]:
    """``count`` one-row transactions on ``database_url`` (PostgreSQL), each one's ms from
    its UPDATE to its COMMIT answered. A table of its own, dropped afterwards."""
    import psycopg

    table = "loadtest_commit_probe"
    times = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, n int)")
        conn.execute(f"INSERT INTO {table} VALUES (1, 0) ON CONFLICT DO NOTHING")
        try:
            for _ in range(count):
                t0 = time.perf_counter()
                with conn.transaction():
                    conn.execute(f"UPDATE {table} SET n = n + 1 WHERE id = 1")
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
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


class LobbySocket(Socket):
    """One idle lobby page: connected, pinging every 10 s, reconnecting."""

    connected = False
    pinger: asyncio.Task[None] | None = None

    def url(self) -> str:
        return "ws" + self.base.removeprefix("http") + "/ws/lobby/"

    def opened(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.pinger = asyncio.ensure_future(self._ping(ws))

    def on_text(self, text: str, at: float) -> None:
        self.connected = True
        frame = json.loads(text)
        if frame.get("type") == "error":
            self.rec.error(str(frame.get("code")), text)

    def lost(self) -> None:
        self.connected = False
        if self.pinger is not None:
            self.pinger.cancel()

    async def _ping(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        # Pages opened at different moments ping at different moments.
        await asyncio.sleep(random.uniform(0, LOBBY_PING_S))
        while not ws.closed:
            await ws.send_str('{"op":"ping"}')
            await asyncio.sleep(LOBBY_PING_S)
