"""Requests run on reused threads (config/http_threads.py): a burst starts no thread per request.

Driven through the ASGI application itself, as Daphne calls it, with a view that
notes the thread it runs on.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.urls import path

from config import http_threads

seen: list[int] = []
gate = threading.Barrier(3, timeout=10)


def where(request: HttpRequest) -> HttpResponse:
    seen.append(threading.get_ident())
    return HttpResponse(str(threading.get_ident()))


def together(request: HttpRequest) -> HttpResponse:
    # Three requests meet here: only possible if each has a thread of its own at once.
    gate.wait()
    seen.append(threading.get_ident())
    return HttpResponse("ok")


urlpatterns = [path("where/", where), path("together/", together)]


async def get(app: Any, url: str) -> tuple[int, bytes]:
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": url, "raw_path": url.encode(), "query_string": b"",
        "root_path": "", "headers": [(b"host", b"testserver")], "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }  # fmt: skip
    got: list[dict[str, Any]] = []
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects
        return {}

    async def send(message: dict[str, Any]) -> None:
        got.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in got if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in got if m["type"] == "http.response.body")
    return status, body


@pytest.fixture
def app(settings: Any, monkeypatch: Any) -> Any:
    settings.ROOT_URLCONF = __name__
    settings.ALLOWED_HOSTS = ["testserver"]
    monkeypatch.setattr(http_threads, "pool", http_threads.ExecutorPool(idle_kept=2))
    seen.clear()
    return http_threads.PooledASGIHandler()


def test_requests_one_after_another_reuse_one_thread(app: Any) -> None:
    async def run() -> list[tuple[int, bytes]]:
        return [await get(app, "/where/") for _ in range(5)]

    answers = asyncio.run(run())
    assert [status for status, _ in answers] == [200] * 5
    assert len(set(seen)) == 1 and seen[0] != threading.get_ident()  # off the loop's thread
    assert http_threads.pool.started == 1


def test_requests_at_once_each_get_a_thread_and_only_so_many_are_kept(app: Any) -> None:
    async def run() -> list[tuple[int, bytes]]:
        return list(await asyncio.gather(*(get(app, "/together/") for _ in range(3))))

    assert [status for status, _ in asyncio.run(run())] == [200] * 3
    assert len(set(seen)) == 3 and http_threads.pool.started == 3
    assert len(http_threads.pool.idle) == 2  # the third was let go (its thread ends alone)
    seen.clear()
    asyncio.run(get(app, "/where/"))
    assert http_threads.pool.started == 3  # the next request found a kept thread


def test_the_site_is_served_by_the_pooled_handler() -> None:
    from config import asgi

    assert isinstance(asgi.django_asgi_app, http_threads.PooledASGIHandler)
