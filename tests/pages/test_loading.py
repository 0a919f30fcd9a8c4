"""Pages load like an app: hashed, pre-compressed, long-cached static files; gzip only
where no secret rides along (BREACH); a description on every page; a web app manifest
and a service worker at the site's root; htmx only where a page uses it."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest
from django.test import Client

from tests.support import Tables

pytestmark = pytest.mark.django_db

GZIP = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br"}


def _static_urls(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', html)


def test_static_files_have_hashed_names_a_year_long_cache_and_gzip(client: Client) -> None:
    html = client.get("/rules/").content.decode()
    urls = _static_urls(html)
    assert urls and all(re.search(r"\.[0-9a-f]{12}\.(css|js|svg|png)$", u) for u in urls), urls
    for url in urls:
        response = client.get(url, **GZIP)
        assert response.status_code == 200, url
        assert "immutable" in response["Cache-Control"], url
        assert int(re.search(r"max-age=(\d+)", response["Cache-Control"])[1]) >= 365 * 86400
        if url.endswith((".css", ".js", ".svg")):
            assert response["Content-Encoding"] == "gzip", url
            body = b"".join(response.streaming_content)  # type: ignore[attr-defined]
            assert gzip.decompress(body)


def test_a_visitors_page_without_a_form_is_compressed(client: Client) -> None:
    for path in ("/rules/", "/leaderboard/", "/"):
        response = client.get(path, **GZIP)
        assert response["Content-Encoding"] == "gzip", path
        html = gzip.decompress(response.content).decode()
        assert "csrfmiddlewaretoken" not in html and "X-CSRFToken" not in html


def test_pages_carrying_a_csrf_token_or_a_players_own_view_are_not_compressed(
    client: Client, alice: Any, bob: Any
) -> None:
    # A form's token next to reflected text (?next=) is what BREACH reads through gzip.
    response = client.get("/accounts/login/?next=/rules/", **GZIP)
    assert "Content-Encoding" not in response
    assert b"csrfmiddlewaretoken" in response.content
    m = Tables().casual(alice, bob)
    client.force_login(alice)
    for path in ("/rules/", f"/matches/{m.pk}/", "/"):
        response = client.get(path, follow=True, **GZIP)
        assert "Content-Encoding" not in response, path
    # Without Accept-Encoding nothing is compressed either.
    client.logout()
    assert "Content-Encoding" not in client.get("/rules/")


def test_every_page_has_its_own_description(client: Client, alice: Any, bob: Any) -> None:
    def description(path: str) -> str:
        html = client.get(path).content.decode()
        found = re.findall(r'<meta name="description" content="([^"]+)">', html)
        assert len(found) == 1, path
        return found[0]

    public = ["/", "/rules/", "/leaderboard/", "/accounts/login/", "/signup/"]
    texts = {path: description(path) for path in public}
    assert len(set(texts.values())) == len(public), texts
    client.force_login(alice)
    m = Tables().casual(alice, bob)
    for path in (f"/matches/{m.pk}/", "/u/alice/", "/u/alice/matches/"):
        assert description(path) not in texts.values(), path


def test_the_manifest_names_the_app_and_its_icons(client: Client) -> None:
    html = client.get("/rules/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in html
    response = client.get("/manifest.webmanifest")
    assert response["Content-Type"] == "application/manifest+json"
    data = json.loads(response.content)
    assert data["name"] == "スペクタキュラー・ビッド" and data["display"] == "standalone"
    assert data["start_url"] == "/" and data["scope"] == "/"
    sizes = {i["sizes"] for i in data["icons"]}
    assert {"192x192", "512x512"} <= sizes
    assert any(i.get("purpose") == "maskable" for i in data["icons"])
    for icon in data["icons"]:
        got = client.get(icon["src"])
        assert got.status_code == 200
        assert b"".join(got.streaming_content).startswith(b"\x89PNG")  # type: ignore[attr-defined]


def test_the_service_worker_is_served_from_the_root_with_the_shells_hashed_files(
    client: Client,
) -> None:
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Service-Worker-Allowed"] == "/"
    assert "no-cache" in response["Cache-Control"]
    source = response.content.decode()
    shell = json.loads(re.search(r"const SHELL = (\[.*?\]);", source)[1])
    base_css = re.search(
        r'href="(/static/css/base\.[0-9a-f]{12}\.css)"', client.get("/").content.decode()
    )
    assert base_css and base_css[1] in shell and "/offline/" in shell
    # The one import is Web Push's handlers (social/), a file that is served.
    assert re.findall(r"importScripts\(([^)]*)\)", source) == ['"/static/js/sw-push.js"']
    assert client.get("/static/js/sw-push.js").status_code == 200
    # Pages are never cached by the worker: only the shell and the offline page.
    assert client.get("/offline/").status_code == 200
    assert client.post("/sw.js").status_code == 405


def test_only_the_pages_that_use_htmx_load_it(client: Client, alice: Any, bob: Any) -> None:
    for path in ("/", "/rules/", "/leaderboard/", "/u/alice/"):
        assert "htmx" not in client.get(path).content.decode(), path
    client.force_login(alice)
    assert "hx-ws" not in client.get("/").content.decode()
    assert "htmx-2" in client.get("/").content.decode()  # the queue card posts with htmx
    m = Tables().casual(alice, bob)
    match_page = client.get(f"/matches/{m.pk}/").content.decode()
    assert "htmx-2" in match_page and "hx-ws-2" in match_page


def test_the_language_switch_is_a_plain_link_that_sets_the_cookie(client: Client) -> None:
    response = client.get("/lang/", {"language": "en", "next": "/rules/"})
    assert response.status_code == 302 and response["Location"] == "/rules/"
    assert response.cookies["django_language"].value == "en"
    assert '<html lang="en">' in client.get("/rules/").content.decode()


def test_a_bad_language_or_a_foreign_next_changes_nothing(client: Client) -> None:
    response = client.get("/lang/", {"language": "xx", "next": "/rules/"})
    assert response.status_code == 400 and "django_language" not in response.cookies
    assert '<html lang="ja">' in client.get("/rules/").content.decode()
    response = client.get("/lang/", {"language": "en", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.post("/lang/", {"language": "en"}).status_code == 405
