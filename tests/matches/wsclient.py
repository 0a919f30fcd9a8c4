"""WebSocket clients for the match tests: a logged-in socket that keeps every frame."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import Client

from config.asgi import application
from matches.models import Match

ORIGIN = (b"origin", b"http://localhost")
HOST = (b"host", b"localhost")
WAIT = 10  # seconds: the longest any expected frame may take


def login_headers(user: Any | None) -> list[tuple[bytes, bytes]]:
    if user is None:
        return [HOST, ORIGIN]
    client = Client()
    client.force_login(user)
    name = django_settings.SESSION_COOKIE_NAME
    return [HOST, ORIGIN, (b"cookie", f"{name}={client.cookies[name].value}".encode())]


class Socket:
    """One connected client; keeps every frame it received."""

    def __init__(self, comm: WebsocketCommunicator) -> None:
        self.comm = comm
        self.frames: list[dict[str, Any]] = []

    async def recv(self) -> dict[str, Any]:
        frame = await self.comm.receive_json_from(timeout=WAIT)
        self.frames.append(frame)
        return frame

    async def until(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Receive until a frame satisfies ``pred`` (each frame waited for at most WAIT s)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            frame = await self.recv()
            if pred(frame):
                return frame
        raise AssertionError("no such frame in time")

    async def state_at(self, version: int) -> dict[str, Any]:
        return await self.until(lambda f: f["type"] == "state" and f["version"] >= version)

    async def send(self, frame: Any) -> None:
        await self.comm.send_json_to(frame)


async def connect(match_id: int, user: Any | None) -> tuple[WebsocketCommunicator, bool, Any]:
    headers = await database_sync_to_async(login_headers)(user)
    comm = WebsocketCommunicator(application, f"/ws/matches/{match_id}/", headers=headers)
    connected, detail = await comm.connect(timeout=WAIT)
    return comm, connected, detail


async def close_code(
    match_id: int, user: Any | None, headers: list[tuple[bytes, bytes]] | None = None
) -> int:
    """Open a socket that the server must refuse: it accepts, sends nothing, then
    closes. Returns the close code (docs/protocol.md: 4401, 4403, 1013)."""
    if headers is None:
        headers = await database_sync_to_async(login_headers)(user)
    comm = WebsocketCommunicator(application, f"/ws/matches/{match_id}/", headers=headers)
    try:
        connected, _ = await comm.connect(timeout=WAIT)
        assert connected, "a refused socket is accepted first, then closed with a code"
        message = await comm.receive_output(timeout=WAIT)
        assert message["type"] == "websocket.close", message
        return int(message["code"])
    finally:
        await comm.disconnect()


async def open_socket(match_id: int, user: Any) -> Socket:
    comm, connected, _ = await connect(match_id, user)
    assert connected
    sock = Socket(comm)
    first = await sock.recv()
    assert first["type"] == "state"
    return sock


def db_state(match_id: int) -> tuple[int, dict[str, Any] | None]:
    m = Match.objects.get(pk=match_id)
    return m.version, m.state
