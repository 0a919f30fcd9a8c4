"""Password floods wait before Django sees them (config/throttle.py).

The throttle sits in front of Django in the ASGI application. These tests drive
it with a stand-in for Django that answers as the log-in view does (the form
again with 200, a lockout with 429, a redirect on success), a clock the test
moves and a ``sleep`` that records how long a post was held.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from config import throttle
from config.throttle import PasswordThrottle, client_address

LOGIN = "/accounts/login/"


class Site:
    """Answers every request with ``status`` and counts what reached it."""

    def __init__(self) -> None:
        self.status = 200
        self.seen: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.seen.append(scope["path"])
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b"page"})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    def __init__(self, **kw: Any) -> None:
        self.site, self.clock = Site(), Clock()
        self.held: list[float] = []
        self.gate: asyncio.Event | None = None  # set: held posts wait for it

        async def sleep(seconds: float) -> None:
            self.held.append(seconds)
            if self.gate is not None:
                await self.gate.wait()

        self.app = PasswordThrottle(self.site, clock=self.clock, sleep=sleep, **kw)

    async def post(
        self, path: str = LOGIN, client: str = "198.51.100.7", method: str = "POST", **scope: Any
    ) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        s = {"type": "http", "method": method, "path": path, "client": (client, 5555)}
        s.update(scope)
        await self.app(s, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def _until(pred: Any) -> None:
    """Let the loop run until ``pred`` holds (the caller bounds it with a deadline)."""
    while not pred():
        await asyncio.sleep(0.001)


async def test_after_ten_refused_log_ins_each_next_one_waits_a_second_then_is_answered() -> None:
    h = Harness(free=10, delay_s=1.0)
    for _ in range(10):
        assert (await h.post())[0] == 200
    assert h.held == []  # a person mistyping is never slowed
    assert await h.post() == (200, b"page")  # still answered by the site, after the wait
    assert h.held == [1.0]
    assert len(h.site.seen) == 11


async def test_successful_log_ins_are_not_counted() -> None:
    h = Harness(free=3)
    h.site.status = 302
    for _ in range(20):
        await h.post()
    assert h.held == []
    h.site.status = 200
    for _ in range(3):
        await h.post()
    assert h.held == []
    await h.post()
    assert h.held == [1.0]


async def test_lockout_pages_count_as_refusals_too() -> None:
    h = Harness(free=2)
    h.site.status = 429
    for _ in range(3):
        await h.post()
    assert h.held == [1.0]


async def test_other_addresses_pages_and_methods_are_never_held() -> None:
    h = Harness(free=1)
    await h.post()
    await h.post()
    assert h.held == [1.0]
    await h.post(client="203.0.113.9")  # someone else logging in
    await h.post(method="GET")  # the form itself
    await h.post(path="/lobby/")
    await h.post(path="/api/invites/")
    assert h.held == [1.0]
    await h.post(path="/signup/")  # sign-up and password change hash too: same address, held
    await h.post(path="/accounts/password_change/")
    await h.post(path="/admin/login/")  # the staff's log-in is guessed the same way
    assert h.held == [1.0, 1.0, 1.0, 1.0]


async def test_the_allowance_comes_back_once_the_window_has_passed() -> None:
    h = Harness(free=2, window_s=10.0)
    await h.post()
    await h.post()
    h.clock.now += 9.0
    await h.post()
    assert h.held == [1.0]
    h.clock.now += 10.5  # every refusal is now older than the window
    await h.post()
    await h.post()
    assert h.held == [1.0]


async def test_too_many_waiting_at_once_are_refused_at_once_without_the_site() -> None:
    h = Harness(free=0, held=3)
    h.gate = asyncio.Event()
    waiting = [asyncio.ensure_future(h.post()) for _ in range(3)]
    await asyncio.wait_for(_until(lambda: len(h.held) == 3), timeout=5)
    assert h.site.seen == []
    status, body = await h.post()
    assert status == 429
    assert "ログインの試行が多すぎます".encode() in body and b"Too many attempts" in body
    assert h.site.seen == []  # refused without Django
    h.gate.set()
    assert [(await w)[0] for w in waiting] == [200, 200, 200]
    assert h.app.waiting == {}  # nobody counted as waiting any more


async def test_addresses_are_forgotten_within_a_bound() -> None:
    h = Harness(free=5, max_addresses=100)
    for i in range(1000):
        await h.post(client=f"10.0.{i // 250}.{i % 250}")
    assert len(h.app.refused) <= 100


@pytest.mark.parametrize(
    ("trusted", "forwarded", "peer", "expected"),
    [
        (0, b"203.0.113.5", "127.0.0.1", "127.0.0.1"),  # no proxy of ours: the header is anyone's
        (1, b"203.0.113.5", "127.0.0.1", "203.0.113.5"),
        (1, b"6.6.6.6, 203.0.113.5", "127.0.0.1", "203.0.113.5"),  # the client wrote 6.6.6.6
        (2, b"203.0.113.5", "127.0.0.1", "127.0.0.1"),  # too few hops: not through our proxies
        (1, b"not-an-address", "127.0.0.1", "127.0.0.1"),
    ],
)
def test_the_client_address_is_read_as_the_lockout_reads_it(
    trusted: int, forwarded: bytes, peer: str, expected: str
) -> None:
    scope = {"client": (peer, 1), "headers": [(b"x-forwarded-for", forwarded)]}
    assert client_address(scope, trusted) == expected


async def test_behind_the_proxy_two_clients_are_held_apart() -> None:
    h = Harness(free=1, trusted_proxies=1)
    for who in (b"203.0.113.1", b"203.0.113.2"):
        await h.post(client="127.0.0.1", headers=[(b"x-forwarded-for", who)])
    assert h.held == []
    await h.post(client="127.0.0.1", headers=[(b"x-forwarded-for", b"203.0.113.1")])
    assert h.held == [1.0]


def test_the_site_is_served_through_the_throttle_with_the_settings() -> None:
    from django.conf import settings

    import config.asgi

    app = config.asgi.http_app
    assert isinstance(app, throttle.PasswordThrottle)
    assert app.free == settings.PASSWORD_THROTTLE_FREE
    assert app.delay_s == settings.PASSWORD_THROTTLE_DELAY_MS / 1000
    assert app.trusted_proxies == settings.TRUSTED_PROXY_COUNT
