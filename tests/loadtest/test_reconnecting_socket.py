"""A harness socket that the server closes comes back by itself, and the close is counted."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from loadtest.bots import Account, Recorder, Socket, wait_until
from tests.loadtest.local_server import serve_app


class Listener(Socket):
    """Keeps what it receives."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.frames: list[str] = []

    def url(self) -> str:
        return "ws" + self.base.removeprefix("http") + "/ws/"

    def on_text(self, text: str, at: float) -> None:
        self.frames.append(text)


async def serve(close_codes: list[int]) -> tuple[web.AppRunner, str, list[str]]:
    """A socket server that greets each connection, closing the first ones with
    ``close_codes`` (1012: service restart), and remembers each one's cookie."""
    cookies: list[str] = []

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        cookies.append(request.headers.get("Cookie", ""))
        await ws.send_str(f"hello {len(cookies)}")
        if close_codes:
            await ws.close(code=close_codes.pop(0))
        else:
            async for _ in ws:
                pass
        return ws

    app = web.Application()
    app.router.add_get("/ws/", handler)
    runner, base = await serve_app(app)
    return runner, base, cookies


async def listen(close_codes: list[int], done: Any) -> tuple[Listener, Recorder, list[str]]:
    """Run a Listener against a server closing with ``close_codes`` until ``done(listener)``
    holds (at most 10 s); the listener, what it recorded and the cookies the server saw."""
    runner, base, cookies = await serve(close_codes)
    rec = Recorder()
    try:
        async with aiohttp.ClientSession() as session:
            sock = Listener(session, base, Account("bot", "s3ss10n"), rec)
            sock.start()
            try:
                assert await wait_until(lambda: done(sock), 10)
            finally:
                await sock.close()
    finally:
        await runner.cleanup()
    return sock, rec, cookies


async def test_a_socket_closed_by_the_server_reconnects_and_counts_a_drop() -> None:
    sock, rec, cookies = await listen([1012], lambda s: len(s.frames) >= 2)
    assert sock.frames[:2] == ["hello 1", "hello 2"]
    assert [code for _, code in rec.drops] == [1012]
    assert cookies[:2] == ["sessionid=s3ss10n"] * 2


async def test_a_refusal_on_purpose_is_not_retried() -> None:
    sock, rec, cookies = await listen([4403], lambda s: s.task is not None and s.task.done())
    assert len(cookies) == 1 and rec.drops == []
    assert [code for _, code in rec.errors] == ["close_4403"]
