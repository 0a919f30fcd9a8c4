"""Measure a move's round trip and the deadline backstop's lateness on a real server.

Run from the repository root::

    python tests/matches/measure_roundtrip.py            # both set-ups
    python tests/matches/measure_roundtrip.py embedded   # or just one: embedded | services

For each set-up it starts Daphne in a subprocess exactly as ``make run`` /
``make run-services`` would (the embedded default: SQLite, in-memory channel
layer, asyncio timers; services: PostgreSQL + Redis channel layer + a Celery
worker), logs two users in over HTTP, makes matches through the JSON API
(invite, accept), and plays them over two WebSockets:

- **round trip**: one client sends a move, the clock stops when the opponent's
  socket receives the resulting state; 200 moves (forced moves are the
  server's, between hands both press continue, which is not counted);
- **backstop lateness**: ~10 matches started and then left alone with a short
  clock; how long after the deadline in the view each socket hears the result.

This is a measurement, not a test: it prints figures and asserts nothing
beyond the protocol working. It needs the ``websockets`` package.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PASSWORD = "measure-only-password-1"
MOVES = 200
IDLE_MATCHES = 10
MAIN_MS, DELAY_MS = 3_000, 1_000  # short, so that left-alone matches end in 4 s
POSTGRES = "postgres://postgres@127.0.0.1:5432"
MEASURE_DB = "spectacular_measure"
REDIS_URL = "redis://127.0.0.1:6379/15"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# --- the server --------------------------------------------------------------------------


class Server:
    """Daphne (and for ``services`` a Celery worker) on a fresh database of its own."""

    def __init__(self, kind: str, workdir: Path) -> None:
        self.kind = kind
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []
        tag = f"sbmeasure{uuid.uuid4().hex[:8]}"
        lines = [
            "from config.settings import *  # noqa: F403",
            f"MATCH_MAIN_MS = {MAIN_MS}",
            f"MATCH_DELAY_MS = {DELAY_MS}",
        ]
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
        if kind == "embedded":
            env["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
        else:
            _fresh_postgres_db()
            env["DATABASE_URL"] = f"{POSTGRES}/{MEASURE_DB}"
            env["REDIS_URL"] = REDIS_URL
            # Redis db 15 is shared with test runs: a prefix and a queue of our own.
            lines += [
                f"CHANNEL_LAYERS['default']['CONFIG']['prefix'] = {tag!r}",
                f"CELERY_TASK_DEFAULT_QUEUE = {tag!r}",
            ]
        self.queue = tag
        (workdir / f"{tag}_settings.py").write_text("\n".join(lines) + "\n")
        env["DJANGO_SETTINGS_MODULE"] = f"{tag}_settings"
        env["PYTHONPATH"] = os.pathsep.join([str(workdir), str(ROOT)])
        env["LOG_LEVEL"] = "WARNING"
        self.env = env
        self.log = workdir / f"{kind}.log"

    def manage(self, *args: str) -> None:
        subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.env, check=True)

    def start(self) -> None:
        self.manage("migrate", "--noinput", "-v", "0")
        self.manage(
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model as g; U = g()\n"
            f"[U.objects.create_user(n, password={PASSWORD!r}) for n in ('alice', 'bob')]",
        )
        out = self.log.open("w")
        self.procs.append(
            subprocess.Popen(
                [PY, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
                + ["config.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        )
        if self.kind == "services":
            self.procs.append(
                subprocess.Popen(
                    [PY, "-m", "celery", "-A", "config", "worker", "-Q", self.queue]
                    + ["-P", "solo", "--without-gossip", "--without-mingle", "-l", "warning"],
                    cwd=ROOT,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.base + "/accounts/login/", timeout=2).read()
                return
            except OSError as exc:
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                    log = self.log.read_text()
                    raise RuntimeError(f"the server did not start:\n{log}") from exc
                time.sleep(0.1)

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.kind == "services":
            import redis

            client = redis.Redis.from_url(REDIS_URL)
            client.delete(self.queue, f"_kombu.binding.{self.queue}")
            client.close()


def _fresh_postgres_db() -> None:
    import psycopg

    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{MEASURE_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{MEASURE_DB}"')


# --- HTTP: log in, invite, accept --------------------------------------------------------------


class Browser:
    """A logged-in HTTP client (session and CSRF cookies), as a scripted player uses it."""

    def __init__(self, base: str, username: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(base + "/accounts/login/").read()
        body = urllib.parse.urlencode(
            {
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.cookie("csrftoken"),
            }
        ).encode()
        self.opener.open(base + "/accounts/login/", body).read()
        assert self.cookie("sessionid"), f"{username} could not log in"

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.jar if c.name == name), "")

    def post(self, path: str) -> dict[str, Any]:
        req = urllib.request.Request(
            self.base + path,
            data=b"{}",
            headers={"X-CSRFToken": self.cookie("csrftoken"), "Content-Type": "application/json"},
        )
        with self.opener.open(req) as resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]

    def headers(self) -> dict[str, str]:
        return {"Cookie": f"sessionid={self.cookie('sessionid')}"}


def new_match(alice: Browser, bob: Browser) -> int:
    code = alice.post("/api/invites/")["code"]
    return int(bob.post(f"/api/invites/{code}/accept/")["match_id"])


# --- WebSocket players --------------------------------------------------------------------------


class Player:
    """One seat's socket; a reader task keeps the latest state and wakes waiters."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.state: dict[str, Any] | None = None
        self.errors: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, server: Server, who: Browser, match_id: int) -> Player:
        url = f"ws://127.0.0.1:{server.port}/ws/matches/{match_id}/"
        ws = await websockets.connect(
            url, additional_headers=who.headers(), origin=websockets.Origin(server.base)
        )
        player = cls(ws)
        await player.wait(lambda s: True)
        return player

    async def _read(self) -> None:
        async for raw in self.ws:
            frame = json.loads(raw)
            frame["_at"] = now_ms()
            if frame["type"] == "state":
                self.state = frame
            else:
                self.errors.append(frame)
            self.changed.set()

    async def wait(self, pred: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while self.state is None or not pred(self.state):
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no such state; errors {self.errors[-3:]}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)
        return self.state

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


def choose(view: dict[str, Any]) -> dict[str, Any]:
    """A legal decision from the seat's own view: decline/accept auctions, first fitting tile."""
    if view["auction"] is not None:
        return {"op": "decline" if view["auction"]["can_decline"] else "accept"}
    first = view["playable"][0]
    at = first["at"][0]
    return {
        "op": "place",
        "tile": first["tile"],
        "at": None if at is None else {"tile": at["tile"], "side": at["side"]},
    }


async def start(players: list[Player]) -> int:
    for i, p in enumerate(players):
        await p.send({"op": "start", "version": i})
        for q in players:
            await q.wait(lambda s, v=i + 1: s["version"] >= v)
    return 2


async def round_trips(server: Server, alice: Browser, bob: Browser) -> list[float]:
    times: list[float] = []
    while len(times) < MOVES:
        match_id = new_match(alice, bob)
        players = [await Player.connect(server, who, match_id) for who in (alice, bob)]
        try:
            await start(players)
            while len(times) < MOVES:
                state = players[0].state
                assert state is not None
                view, version = state["view"], state["version"]
                if view["phase"] == "match_over":
                    break
                if view["phase"] == "hand_over":
                    for i, p in enumerate(players):
                        await p.send({"op": "continue", "version": version + i})
                        for q in players:
                            await q.wait(lambda s, v=version + i + 1: s["version"] >= v)
                    continue
                seat = view["to_act"]
                mover, other = players[seat], players[1 - seat]
                own = mover.state
                assert own is not None and own["version"] == version
                frame = {**choose(own["view"]), "version": version}
                sent = time.perf_counter()
                await mover.send(frame)
                await other.wait(lambda s, v=version: s["version"] > v)
                times.append((time.perf_counter() - sent) * 1000)
                await mover.wait(lambda s, v=version: s["version"] > v)
        finally:
            for p in players:
                await p.close()
    return times


async def left_alone(server: Server, alice: Browser, bob: Browser) -> list[int]:
    async def one() -> list[int]:
        match_id = new_match(alice, bob)
        players = [await Player.connect(server, who, match_id) for who in (alice, bob)]
        try:
            await start(players)
            state = players[0].state
            assert state is not None
            deadline = state["view"]["clocks"]["deadline"]
            late = []
            for p in players:
                over = await p.wait(lambda s: s["view"]["phase"] == "match_over", timeout=30)
                assert over["view"]["end"] == "time", over["view"]["end"]
                late.append(over["_at"] - deadline)
            return late
        finally:
            for p in players:
                await p.close()

    results = await asyncio.gather(*(one() for _ in range(IDLE_MATCHES)))
    return [x for r in results for x in r]


def measure(kind: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(kind, Path(tmp))
        server.start()
        try:
            alice, bob = Browser(server.base, "alice"), Browser(server.base, "bob")
            trips = asyncio.run(round_trips(server, alice, bob))
            late = asyncio.run(left_alone(server, alice, bob))
        finally:
            server.stop()
    return {"kind": kind, "trips": trips, "late": late}


def report(r: dict[str, Any]) -> None:
    trips, late = r["trips"], r["late"]
    print(f"\n== {r['kind']} ==")
    print(
        f"move round trip ({len(trips)} moves): p50 {statistics.median(trips):.1f} ms, "
        f"p99 {pct(trips, 99):.1f} ms, max {max(trips):.1f} ms"
    )
    print(
        f"backstop lateness ({IDLE_MATCHES} idle matches, {len(late)} sockets): "
        f"p50 {statistics.median(late):.0f} ms, max {max(late)} ms, min {min(late)} ms"
    )


def main(argv: list[str]) -> None:
    kinds = argv or ["embedded", "services"]
    for kind in kinds:
        if kind not in ("embedded", "services"):
            raise SystemExit(f"unknown set-up {kind!r}: embedded or services")
    results = [measure(kind) for kind in kinds]
    for r in results:
        report(r)


if __name__ == "__main__":
    main(sys.argv[1:])
