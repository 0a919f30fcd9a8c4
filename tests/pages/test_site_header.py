"""The header on every page (sections, account, language, favicon) and the lobby's
time control and rules link."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client


def _header(html: str) -> str:
    found = re.search(r'<header class="site-header">.*?</header>', html, re.S)
    assert found
    return found[0]


def _nav(html: str) -> list[tuple[str, str]]:
    nav = re.search(r'<nav class="site-nav".*?</nav>', _header(html), re.S)
    assert nav
    return re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', nav[0])


@pytest.mark.parametrize("path", ["/", "/rules/", "/leaderboard/", "/accounts/login/"])
def test_a_visitor_finds_the_lobby_ranking_and_rules_everywhere(
    client: Client, db: Any, path: str
) -> None:
    html = client.get(path).content.decode()
    assert _nav(html) == [("/", "ロビー"), ("/leaderboard/", "ランキング"), ("/rules/", "ルール")]
    assert f'<link rel="icon" href="{static("favicon.svg")}" type="image/svg+xml">' in html


def test_a_player_also_finds_their_own_matches(client: Client, alice: Any, bob: Any) -> None:
    client.force_login(alice)
    html = client.get("/u/alice/matches/").content.decode()
    nav = _nav(html)
    assert ("/u/alice/matches/", "自分の対局") in nav
    # The page shown is marked as the current section.
    assert re.search(r'href="/u/alice/matches/" aria-current="page"', _header(html))
    assert 'aria-current="page"' not in _header(client.get("/u/bob/").content.decode())


def test_the_header_speaks_english_when_asked(client: Client, alice: Any) -> None:
    client.force_login(alice)
    client.cookies["django_language"] = "en"
    nav = _nav(client.get("/").content.decode())
    assert [label for _href, label in nav] == ["Lobby", "Leaderboard", "My matches", "Rules"]


def test_logging_in_from_a_page_comes_back_to_it(client: Client, db: Any) -> None:
    header = _header(client.get("/rules/").content.decode())
    assert 'href="/accounts/login/?next=/rules/"' in header
    assert 'href="/signup/?next=/rules/"' in header


def test_the_favicon_is_a_static_file() -> None:
    path = finders.find("favicon.svg")
    assert path is not None
    with open(path, encoding="utf-8") as f:
        assert f.read().startswith("<svg")


@pytest.mark.parametrize("logged_in", [False, True])
def test_the_lobby_states_the_time_control_and_links_the_rules(
    client: Client, alice: Any, logged_in: bool
) -> None:
    if logged_in:
        client.force_login(alice)
    html = client.get("/").content.decode()
    assert 'data-testid="time-control"' in html
    assert "各自2分（120秒）" in html and "手番ごとに最初の10秒" in html
    assert re.search(r'<a [^>]*href="/rules/"[^>]*data-testid="rules-link"', html)


def test_a_browser_asking_for_favicon_ico_gets_the_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == static("favicon.svg")
