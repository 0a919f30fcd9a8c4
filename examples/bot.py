#!/usr/bin/env python3
"""A complete Spectacular Bid bot, over the public protocol (docs/protocol.md, "Writing a bot").

It plays a bot account with the account's API token (made on the account's
profile page): HTTP with ``Authorization: Bearer <token>`` to create or accept
an invite, then the match WebSocket with the same header, deciding each move
with the computer player of this repository (``bots``, level 2 by default).

    export SB_TOKEN=sbb_...            # the bot account's token
    python examples/bot.py --server http://127.0.0.1:8000 create
        # prints the invite's URL and code, waits until someone accepts, plays
    python examples/bot.py --server http://127.0.0.1:8000 accept CODE
        # accepts the invite CODE and plays

It plays the match to its end (presses Start, moves, presses 次へ between
hands), prints the result as one JSON line and exits 0 (1 on an error). If the
socket drops it reconnects once: the server sends the whole current view on
every connection, so nothing is lost. Needs ``websockets`` (and this
repository's ``bots`` on the path: run it from the repository's virtualenv).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import websockets

try:
    import bots
except ImportError:  # run from a checkout without installing it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import bots

OVER = ("finished", "aborted", "voided")
FINAL_CLOSES = {4401: "the token is not valid (revoked?)", 4403: "no such match"}
RECONNECTS = 1  # socket drops survived in one match
RECONNECT_WINDOW_S = 30.0  # how long that reconnection keeps trying
POLL_S = 2.0  # how often the inviter asks whether its invite was accepted (well under the limit)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


class Api:
    """The HTTP half of the protocol: JSON in, JSON out, the token in every request."""

    def __init__(self, server: str, token: str) -> None:
        self.server = server.rstrip("/")
        self.token = token

    def call(self, method: str, path: str, body: Any = None) -> Any:
        request = urllib.request.Request(
            self.server + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=15) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as e:
            try:
                err = json.load(e)
            except ValueError:
                err = {}
            raise ApiError(e.code, err.get("code", "http_error"), err.get("message", "")) from None

    def live_match_ids(self) -> set[int]:
        return {m["id"] for m in self.call("GET", "/api/matches/live/")["matches"]}

    def socket_url(self, match_id: int) -> str:
        scheme, rest = self.server.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws/matches/{match_id}/"


def create_and_wait(api: Api, say: Any) -> int:
    """Create an invite, print its URL, and wait for the match its acceptance makes."""
    before = api.live_match_ids()
    invite = api.call("POST", "/api/invites/")
    say({"invite": invite["url"], "code": invite["code"], "expires_at": invite["expires_at"]})
    expires = datetime.fromisoformat(invite["expires_at"])
    while datetime.now(UTC) < expires:
        time.sleep(POLL_S)
        new = api.live_match_ids() - before
        if new:
            return min(new)
    raise RuntimeError("nobody accepted the invite before it expired")


async def play(api: Api, match_id: int, level: int, log: Any) -> dict[str, Any]:
    """Play ``match_id`` to its end; the final ``match`` block of the view."""
    player = bots.Player(level, random.Random())  # one for the match: it keeps the hand's events
    drops = 0
    while True:
        try:
            ws = await _connect(api, match_id, RECONNECT_WINDOW_S if drops else 0)
            async with ws:
                return await _play_on(ws, player, log)
        except websockets.ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd is not None else None
            if code in FINAL_CLOSES:
                raise RuntimeError(f"socket closed {code}: {FINAL_CLOSES[code]}") from None
            drops += 1
            if drops > RECONNECTS:
                raise
            log(f"socket closed ({code}); reconnecting")
        except OSError as e:
            drops += 1
            if drops > RECONNECTS:
                raise
            log(f"socket failed ({e}); reconnecting")
        await asyncio.sleep(1.0)  # 1013 asks for a pause; 1012 would allow none


async def _connect(api: Api, match_id: int, retry_s: float) -> Any:
    """The match socket; when reconnecting, tries again for ``retry_s`` (a server restarting)."""
    deadline = time.monotonic() + retry_s
    while True:
        try:
            return await websockets.connect(
                api.socket_url(match_id),
                additional_headers={"Authorization": f"Bearer {api.token}"},
                open_timeout=15,
            )
        except (OSError, websockets.InvalidHandshake):
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(1.0)


class Pace:
    """The server's frame budget, kept on this side (docs/protocol.md § *Limits*): a
    burst of 20 frames, refilled at 5 a second. Past it the server would refuse
    the frame (``rate_limited``) and, kept up, close the socket with 4429."""

    def __init__(self, burst: float = 20, per_s: float = 5) -> None:
        self.burst, self.per_s = burst, per_s
        self.tokens, self.at = burst - 1, time.monotonic()  # one spare for rounding

    async def take(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst - 1, self.tokens + (now - self.at) * self.per_s)
        self.at = now
        if self.tokens < 1:
            await asyncio.sleep((1 - self.tokens) / self.per_s)
            self.tokens, self.at = 1.0, time.monotonic()
        self.tokens -= 1


async def _play_on(ws: Any, player: bots.Player, log: Any) -> dict[str, Any]:
    # What this connection has pressed (Start once, 次へ once a hand) and the last
    # version it acted on: a repeated view must not send a second action. While an
    # action is on its way (``waiting``), a change that only gave time back (every
    # event of it a ``credit``: our restart's) does not ask for a new one — the
    # server applies the first, and would refuse a second as stale.
    pressed: set[tuple[str, int]] = set()
    acted: int | None = None
    waiting = False
    pace = Pace()
    async for text in ws:
        frame = json.loads(text)
        if frame["type"] == "error":
            log(f"refused: {frame['code']}: {frame['message']}")
            waiting = False
            continue  # after stale and friends the current state follows
        if frame["type"] != "state":
            continue
        version, view = frame["version"], frame["view"]
        if waiting and _only_time_given(view):
            acted = version
        else:
            waiting = False
        match = view["match"]
        if match["status"] in OVER:
            return dict(match)
        seat = view["seat"]
        hand_no = view.get("hand_no") or 0
        press = None
        if match["status"] == "waiting":
            press = "start"
        elif view["phase"] == "hand_over":
            press = "continue"
        if press is not None:
            if not match["ready"][seat] and (press, hand_no) not in pressed:
                pressed.add((press, hand_no))
                await pace.take()
                await ws.send(json.dumps({"op": press, "version": version}))
            continue
        if view["phase"] not in ("auction", "play"):
            continue
        action = player.observe(view)  # every view: it gathers the hand's events
        if action is not None and acted != version:
            acted, waiting = version, True
            await pace.take()
            await ws.send(json.dumps({**action, "version": version}))
    raise ConnectionError("the server closed the socket before the match ended")


def _only_time_given(view: dict[str, Any]) -> bool:
    """A pushed change's frame (``events_after`` set) whose every event is a ``credit``."""
    events = view.get("events") or []
    return (
        view.get("events_after") is not None
        and bool(events)
        and all(e.get("type") == "credit" for e in events)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("SB_TOKEN", ""), help="or SB_TOKEN")
    parser.add_argument("--level", type=int, default=2, choices=bots.LEVELS)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("create", help="create an invite, print its URL, play whoever accepts")
    accept = sub.add_parser("accept", help="accept an invite by its code and play")
    accept.add_argument("code")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give the bot account's token: --token or SB_TOKEN")

    def say(obj: dict[str, Any]) -> None:
        print(json.dumps(obj), flush=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    api = Api(args.server, args.token)
    try:
        if args.command == "create":
            match_id = create_and_wait(api, say)
        else:
            match_id = api.call("POST", f"/api/invites/{args.code}/accept/")["match_id"]
        say({"match_id": match_id})
        result = asyncio.run(play(api, match_id, args.level, log))
    except (ApiError, RuntimeError, OSError, websockets.WebSocketException) as e:
        log(f"error: {e}")
        return 1
    say({"match_id": match_id, "status": result["status"], "result": result["result"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
