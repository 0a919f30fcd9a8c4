"""A bench table refused with 503 waits the server's Retry-After before asking again,
as the pages do (static/js/page.js), instead of coming back every second."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from loadtest.bots import Account, Api, HttpError, Recorder, retry_wait
from tests.loadtest.local_server import serve_app


async def test_a_refused_new_match_is_asked_again_after_the_servers_retry_after() -> None:
    async def busy(request: web.Request) -> web.Response:
        body = {"code": "overloaded", "message": "busy", "retry_after": 12}
        return web.json_response(body, status=503, headers={"Retry-After": "12"})

    app = web.Application()
    app.router.add_post("/api/invites/", busy)
    runner, base = await serve_app(app)
    rec = Recorder()
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            api = Api(base, http, rec)
            acct = Account("bot", "session")
            acct.csrftoken = "token"
            with pytest.raises(HttpError) as refused:
                await api.post(acct, "/api/invites/")
    finally:
        await runner.cleanup()
    assert refused.value.retry_after == 12
    assert [code for _, code in rec.errors] == ["http_503_overloaded"]
    waits = [retry_wait(refused.value) for _ in range(200)]
    assert all(12 <= w <= 18 for w in waits) and max(waits) > 13  # jittered, never sooner
    assert retry_wait(HttpError("any other failure")) == 1.0
    assert retry_wait(HttpError("far past its limits", 600)) <= 45  # at most 30 s, jittered
