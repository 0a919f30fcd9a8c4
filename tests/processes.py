"""Real server processes for the tests that need them: web processes, HAProxy, clients.

``WebProcess`` runs ``python -m config.serve`` (what ``make run`` and the
Procfile run) on a free port against the test database, so a test can open
sockets to two processes, restart one, or send it SIGTERM. ``Client`` is a
logged-in WebSocket client speaking docs/protocol.md (``websockets``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_database_url() -> str:
    """The URL of the database this test run uses (the servers must see its rows)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    return (
        f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )


def server_env(**extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "PYTHONUNBUFFERED": "1",
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
        # A loaded test machine's slow moments must not refuse the test's own requests.
        "ADMISSION": "false",
    }
    for key in ("REDIS_URL", "MATCH_SWEEPER", "DEBUG", "CHANNEL_LAYER_PREFIX", "LIVENESS_PREFIX"):
        env.pop(key, None)
    env.update(extra)
    return env


def wait_for(pred: Any, timeout_s: float, what: str) -> None:
    """Poll ``pred`` until it holds, or fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s} s")
        time.sleep(0.05)


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1).read()
        return True
    except OSError:
        return False


# The log of every process the test being run started: a failing test's report shows
# the end of each (tests/conftest.py), so that a failure in CI can be explained.
LOGS: list[Path] = []
LOG_TAIL = 6_000


class Process:
    """A subprocess with its output in a log file."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.argv, self.env, self.log_path = argv, env, log
        self.proc: subprocess.Popen[bytes] | None = None
        LOGS.append(log)

    def start(self) -> Process:
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        return self

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout_s: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class WebProcess(Process):
    """``python -m config.serve`` on its own port."""

    def __init__(self, tmp: Path, name: str, env: dict[str, str], port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "config.serve", "--port", str(self.port)]
        super().__init__(argv, env, tmp / f"{name}.log")

    def start(self) -> WebProcess:
        super().start()
        assert self.proc is not None
        proc = self.proc
        wait_for(
            lambda: answers(self.url + "/") or proc.poll() is not None, 30, f"{self.argv} start"
        )
        if proc.poll() is not None:
            raise AssertionError(f"the web process died:\n{self.log[-3000:]}")
        return self


def site_headers(base_url: str, cookie: str | None) -> list[tuple[str, str]]:
    headers = [("Origin", base_url)]
    if cookie:
        headers.append(("Cookie", cookie))
    return headers


class Client:
    """A logged-in JSON match socket on a real server (docs/protocol.md)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, base_url: str, match_id: int, cookie: str, **kw: Any) -> Client:
        import websockets

        ws = await websockets.connect(
            base_url.replace("http", "ws", 1) + f"/ws/matches/{match_id}/",
            additional_headers=site_headers(base_url, cookie),
            open_timeout=WAIT_S,
            **kw,
        )
        return cls(ws)

    async def recv(self) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT_S))
        self.frames.append(frame)
        return frame

    async def state_at(self, version: int) -> dict[str, Any]:
        while True:
            f = await self.recv()
            if f["type"] == "state" and f["version"] >= version:
                return f

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def close(self) -> None:
        await self.ws.close()


def session_cookie(user: Any) -> str:
    """A session cookie for ``user`` in the test database (``name=value``)."""
    from django.conf import settings
    from django.test import Client as DjangoClient

    c = DjangoClient()
    c.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={c.cookies[name].value}"
