"""Every /api/ endpoint answers a caller without a session with 401 JSON, CSRF cookie or not.

The endpoints are read from the URL configuration, so a new one is covered the
day it is added.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import AsyncClient, Client
from django.urls import URLPattern, URLResolver, get_resolver

# A value for each path converter, to turn a route into a URL.
SAMPLE = {
    "int": "1",
    "str": "abc123",
    "slug": "abc",
    "uuid": "00000000-0000-0000-0000-000000000000",
}


def routes(patterns: list[Any], prefix: str = "") -> list[str]:
    found = []
    for p in patterns:
        if isinstance(p, URLResolver):
            found += routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            found.append(prefix + str(p.pattern))
    return found


def sample_url(route: str) -> str:
    return "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m[1] or "str"], route)


API_URLS = sorted(
    sample_url(r) for r in routes(get_resolver().url_patterns) if r.startswith("api/")
)


def test_the_api_endpoints_were_found() -> None:
    assert {
        "/api/matches/live/",
        "/api/matches/same-device/",
        "/api/matches/1/state/",
        "/api/invites/",
        "/api/invites/abc123/accept/",
    } <= set(API_URLS)


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("url", API_URLS)
def test_an_anonymous_call_gets_401_json_without_a_csrf_cookie(
    db: Any, url: str, method: str
) -> None:
    client = Client(enforce_csrf_checks=True)  # and no cookie of any kind
    if method == "get":
        response = client.get(url)
    else:
        response = client.post(url, "{}", content_type="application/json")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"code": "not_logged_in", "message": "先にログインしてください。"}


@pytest.mark.parametrize("url", API_URLS)
def test_the_401_message_follows_the_language(db: Any, url: str) -> None:
    response = Client(enforce_csrf_checks=True).post(url, HTTP_ACCEPT_LANGUAGE="en")
    assert response.json()["message"] == "Log in first."


def test_a_logged_in_post_still_needs_the_csrf_token(alice: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/api/invites/")
    assert response.status_code == 403  # CSRF, exactly as before

    client.get("/")  # any page sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post("/api/invites/", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert set(response.json()) == {"code", "url", "expires_at"}


async def test_the_asgi_middleware_chain_answers_the_same(transactional_db: Any) -> None:
    """Daphne runs the middleware asynchronously: the same answers there."""
    from asgiref.sync import sync_to_async

    from tests.support import make_user

    client = AsyncClient(enforce_csrf_checks=True)
    response = await client.post("/api/invites/")
    assert response.status_code == 401
    assert response.json()["code"] == "not_logged_in"

    await client.aforce_login(await sync_to_async(make_user)("erin"))
    assert (await client.get("/api/matches/live/")).json() == {"matches": []}
    assert (await client.post("/api/invites/")).status_code == 403  # no CSRF token


def test_pages_outside_the_api_keep_their_usual_answers(db: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    # An anonymous form post elsewhere meets the CSRF check (the friendly page)...
    response = client.post("/accounts/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert "もう一度" in response.content.decode()
    # ...and a page that needs a log-in still redirects to it.
    response = client.get("/matches/1/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
