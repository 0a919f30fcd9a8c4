"""Password floods wait their turn without taking the matches' CPU (ASGI, before Django).

A wrong-password flood is cheap for an attacker and dear for us: every refused
log-in still runs Django's middleware, django-axes' lookups and a page render,
about 7 ms of CPU, on the process that also relays its players' moves. With a
handful of connections looping as fast as the answers come, a flood takes what
CPU it can get, and a live match's moves wait behind it.

So the password forms (log-in, the admin's log-in, sign-up, password change) are throttled per
client address, in each web process: the first ``free`` refused posts in
``window_s`` pass at once; after that each post waits ``delay_s`` before Django
sees it (an ``asyncio.sleep``: a waiting request costs no CPU and holds no
thread), so a closed-loop flood gets at most one answer per connection a second.
At most ``held`` posts of one address wait at a time; more are refused at once
with a short 429, without Django. A successful post (a redirect) is not counted,
so people logging in never wait; axes' lockout still applies on top.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

PASSWORD_PATHS = (
    "/accounts/login/",
    "/admin/login/",  # the staff's log-in: the same guessing, the same brake
    "/signup/",
    "/accounts/password_change/",
)

TOO_MANY = (
    "ログインの試行が多すぎます。しばらくしてからもう一度お試しください。\n"
    "Too many attempts. Please wait a moment and try again.\n"
).encode()


def client_address(scope: Scope, trusted_proxies: int) -> str:
    """The address an ASGI request comes from, as the log-in lockout reads it."""
    remote = str((scope.get("client") or ("",))[0] or "")
    raw = b",".join(v for k, v in scope.get("headers") or () if k.lower() == b"x-forwarded-for")
    return forwarded_address(remote, raw.decode("latin-1"), trusted_proxies)


def forwarded_address(remote: str, forwarded_for: str, trusted_proxies: int) -> str:
    """The client's address: the peer ``remote``, unless proxies of ours stand in front.

    With ``trusted_proxies`` of them, it is the address the outermost one saw,
    counted from the right of ``X-Forwarded-For`` (``forwarded_for``): each proxy
    appends the address it received from, so the entries left of that are
    whatever the client wrote and are never believed. A header with too few
    entries (a request that did not come through the proxies) falls back on
    ``remote``.
    """
    if trusted_proxies <= 0:
        return remote
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    if len(hops) < trusted_proxies:
        return remote
    try:
        return str(ipaddress.ip_address(hops[-trusted_proxies]))
    except ValueError:
        return remote


class PasswordThrottle:
    """ASGI middleware: see the module's docstring."""

    def __init__(
        self,
        app: App,
        *,
        paths: Iterable[str] = PASSWORD_PATHS,
        free: int = 10,
        window_s: float = 10.0,
        delay_s: float = 1.0,
        held: int = 32,
        trusted_proxies: int = 0,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.app = app
        self.paths = frozenset(paths)
        self.free, self.window_s, self.delay_s, self.held = free, window_s, delay_s, held
        self.trusted_proxies = trusted_proxies
        self.max_addresses = max_addresses
        self.clock, self.sleep = clock, sleep
        self.refused: dict[str, deque[float]] = {}  # address → times of refused posts
        self.waiting: dict[str, int] = {}  # address → posts waiting now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope.get("type") != "http"
            or scope.get("method") != "POST"
            or scope.get("path") not in self.paths
        ):
            await self.app(scope, receive, send)
            return
        address = client_address(scope, self.trusted_proxies)
        if self._recent(address) >= self.free:
            if self.waiting.get(address, 0) >= self.held:
                self._count(address)
                await _too_many(send)
                return
            self.waiting[address] = self.waiting.get(address, 0) + 1
            try:
                await self.sleep(self.delay_s)
            finally:
                self.waiting[address] -= 1
                if not self.waiting[address]:
                    del self.waiting[address]

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and not 300 <= message["status"] < 400:
                self._count(address)  # a refusal (the form again, a lockout): counted
            await send(message)

        await self.app(scope, receive, watch)

    def _recent(self, address: str) -> int:
        times = self.refused.get(address)
        if not times:
            return 0
        horizon = self.clock() - self.window_s
        while times and times[0] < horizon:
            times.popleft()
        if not times:
            del self.refused[address]
            return 0
        return len(times)

    def _count(self, address: str) -> None:
        times = self.refused.get(address)
        if times is None:
            if len(self.refused) >= self.max_addresses:
                self._forget_stale()
            times = self.refused[address] = deque(maxlen=max(self.free, 1) * 4)
        times.append(self.clock())

    def _forget_stale(self) -> None:
        horizon = self.clock() - self.window_s
        for address in [a for a, t in self.refused.items() if not t or t[-1] < horizon]:
            del self.refused[address]
        while len(self.refused) >= self.max_addresses:  # all recent: drop the oldest entry
            del self.refused[next(iter(self.refused))]


async def _too_many(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"retry-after", b"10"),
                (b"content-length", str(len(TOO_MANY)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": TOO_MANY})
