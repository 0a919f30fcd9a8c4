"""The 404, 403, 500 (and CSRF) pages: friendly, in the reader's language, and telling nothing
about the server (no URL list, no settings, no traceback)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.template import loader
from django.test import Client
from django.utils import translation

from tests.support import Tables

LEAKS = ("URLconf", "admin/", "api/", "Traceback", "DATABASES", "REDIS_URL", "SECRET_KEY")


def assert_tells_nothing(page: str) -> None:
    assert [leak for leak in LEAKS if leak in page] == []


def test_the_404_page(client: Client, db: Any) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "ページが見つかりません" in page
    assert 'href="/"' in page and "ロビーに戻る" in page
    assert re.search(r"/static/css/base\.[0-9a-f]{12}\.css", page)  # hashed: cached a year
    assert_tells_nothing(page)


def test_the_404_page_in_english(client: Client, db: Any) -> None:
    page = client.get("/no-such-page/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Page not found" in page and "Back to the lobby" in page
    assert '<html lang="en">' in page


def test_the_403_page_says_why(client: Client, alice: Any, bob: Any, outsider: Any) -> None:
    # A replay is for its two players only (anyone may watch a live match, though).
    tables = Tables()
    match = tables.resign(tables.start(tables.casual(alice, bob)), alice)
    client.force_login(outsider)
    response = client.get(f"/matches/{match.pk}/replay/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "このページは開けません" in page
    assert 'class="message message--error"' in page  # the service's reason
    assert_tells_nothing(page)


def test_the_csrf_failure_page(db: Any) -> None:
    response = Client(enforce_csrf_checks=True).post("/signup/", {"username": "x"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "もう一度お試しください" in page
    assert "CSRF" not in page


@pytest.mark.urls("tests.accounts.urls_failing")
@pytest.mark.parametrize(
    ("language", "text"), [("ja", "問題が発生しました"), ("en", "Something went wrong")]
)
def test_the_500_page(db: Any, language: str, text: str) -> None:
    client = Client(raise_request_exception=False)
    response = client.get("/fails/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 500
    page = response.content.decode()
    assert text in page
    assert_tells_nothing(page)


def test_the_500_page_renders_without_a_request_or_the_database() -> None:
    # No db fixture: pytest-django fails any query. No request, no context: what
    # Django's server_error does when the fault may be the database itself.
    with translation.override("ja"):
        page = loader.get_template("500.html").render()
    assert "問題が発生しました" in page
    assert "ロビーに戻る" in page
