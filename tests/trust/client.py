"""Scripted clients for the trust tests: logged-in HTTP sessions and their sockets.

A :class:`Browser` is one browser: a Django test ``Client`` logged in with a real
password, whose session cookie its sockets carry (so logging that client out
ends exactly that session). :func:`play_decisions` makes real decisions on the
match sockets the way a client reads them from its views.
"""

from __future__ import annotations

import time
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from config.asgi import application
from tests.matches.wsclient import HOST, ORIGIN, WAIT, Socket
from tests.support import PASSWORD


class Browser:
    """One browser of ``user``: its own session, logged in through the login page."""

    def __init__(self, user: Any) -> None:
        self.user = user
        self.http = Client()
        response = self.http.post(
            "/accounts/login/", {"username": user.username, "password": PASSWORD}
        )
        assert response.status_code == 302, response.status_code

    def headers(self) -> list[tuple[bytes, bytes]]:
        name = settings.SESSION_COOKIE_NAME
        return [HOST, ORIGIN, (b"cookie", f"{name}={self.http.cookies[name].value}".encode())]


async def login(user: Any) -> Browser:
    return await database_sync_to_async(Browser)(user)


async def socket(browser: Browser, path: str) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path, headers=browser.headers())
    connected, _ = await comm.connect(timeout=WAIT)
    assert connected
    return comm


async def match_socket(browser: Browser, match_id: int) -> Socket:
    sock = Socket(await socket(browser, f"/ws/matches/{match_id}/"))
    first = await sock.recv()
    assert first["type"] == "state", first
    return sock


async def closed_within(comm: WebsocketCommunicator, seconds: float) -> tuple[int, float]:
    """Wait for the server to close ``comm``; ``(close code, seconds it took)``.

    Frames that were already on their way (a pushed state) are skipped.
    """
    start = time.monotonic()
    while True:
        left = seconds - (time.monotonic() - start)
        assert left > 0, f"the socket was not closed within {seconds} s"
        message = await comm.receive_output(timeout=left)
        if message["type"] == "websocket.close":
            return int(message["code"]), time.monotonic() - start


async def newest(sock: Socket, after: int) -> dict[str, Any]:
    """The view of the first state frame past version ``after``, and any already queued."""
    frame = await sock.until(lambda f: f["type"] == "state" and f["version"] > after)
    return dict(frame["view"])


def decision_frame(view: dict[str, Any]) -> dict[str, Any]:
    """A legal decision for the seat of ``view`` (it is to act): what a simple client sends."""
    version = view["match"]["version"]
    if view["phase"] == "auction":
        a = view["auction"]
        op = "decline" if a["can_decline"] else "accept" if a["can_accept"] else "bid"
        frame: dict[str, Any] = {"op": op, "version": version}
        if op == "bid":
            frame["amount"] = a["min_bid"]
        return frame
    first = view["playable"][0]
    return {"op": "place", "tile": first["tile"], "at": first["at"][0], "version": version}


async def start(socks: dict[int, Socket], version: int = 0) -> dict[int, dict[str, Any]]:
    """Both press 開始; each seat's view of the live match."""
    for s in (0, 1):
        await socks[s].send({"op": "start", "version": version})
    views = {}
    for s in (0, 1):
        views[s] = await socks[s].until(
            lambda f: f["type"] == "state" and f["view"]["match"]["status"] == "live"
        )
    return {s: dict(f["view"]) for s, f in views.items()}


async def play_decisions(
    socks: dict[int, Socket], views: dict[int, dict[str, Any]], each: int
) -> tuple[dict[int, int], dict[int, dict[str, Any]]]:
    """The seat to act decides until both made at least ``each`` decisions (no
    frame but the decisions themselves); how many each made, and the views then."""
    made = {0: 0, 1: 0}
    while min(made.values()) < each:
        view = views[0]
        assert view["phase"] in ("auction", "play"), view["phase"]
        seat = view["to_act"]
        await socks[seat].send(decision_frame(views[seat]))
        made[seat] += 1
        version = view["match"]["version"]
        views = {s: await newest(socks[s], version) for s in (0, 1)}
    return made, views
