"""The BOT badge next to a bot's name on every page, and no bot on the leaderboard.

robo is a user's bot account; ``cpu`` is one of the site's computer players
(``computer_level``), which wear the same badge. alice and bob are people and
never wear it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.reserved import computer_account
from matches.models import Match
from tests.support import Tables, use_embedded_default

BADGE = 'data-testid="bot-badge"'


@pytest.fixture
def tables(db: Any, settings: Any) -> Tables:
    use_embedded_default(settings, deal_seed=5)
    return Tables()


def page(viewer: Any, url: str) -> str:
    c = Client()
    if viewer is not None:
        c.force_login(viewer)
    response = c.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def badged_names(html: str) -> list[str]:
    """The names that the badge follows (a link's text, or a name span's)."""
    return re.findall(r"([^<>\s]+)(?:</a>|</span>)?\s*<span class=\"bot-badge\"", html)


def test_a_bots_profile_shows_the_badge_and_a_persons_does_not(
    robo: tuple[Any, str], alice: Any
) -> None:
    assert badged_names(page(None, "/u/robo/")) == ["robo"]
    assert BADGE not in page(None, "/u/alice/")
    title = re.search(r'class="bot-badge" title="([^"]+)"', page(None, "/u/robo/"))
    assert title and title.group(1) == "このアカウントはプログラムが対局します"


def test_the_match_page_shows_the_badge_next_to_the_bot_for_both_seats(
    tables: Tables, robo: tuple[Any, str], alice: Any
) -> None:
    m = tables.casual(alice, robo[0])
    tables.start(m)
    for viewer in (alice, robo[0]):
        html = page(viewer, f"/matches/{m.pk}/")
        player1 = re.search(r'data-testid="player-1".*?</section>', html, re.S)
        player0 = re.search(r'data-testid="player-0".*?</section>', html, re.S)
        assert player1 and player0
        assert BADGE in player1.group(0) and BADGE not in player0.group(0)


def test_the_lobby_lists_a_waiting_match_with_the_badge(
    tables: Tables, robo: tuple[Any, str], alice: Any
) -> None:
    tables.casual(alice, robo[0])  # waiting for Start: listed in the lobby
    assert badged_names(page(alice, "/")) == ["robo"]


def test_the_invite_page_badges_a_bot_inviter(
    tables: Tables, robo: tuple[Any, str], bob: Any
) -> None:
    from matches.lobby.invites import create_invite

    code = create_invite(robo[0]).code
    html = page(bob, f"/invites/{code}/")
    assert re.search(r'data-testid="inviter">robo<span class="bot-badge"', html)


def test_history_and_replay_badge_the_bot_opponent(
    tables: Tables, robo: tuple[Any, str], alice: Any
) -> None:
    m = tables.resign(tables.start(tables.casual(alice, robo[0])), robo[0])
    assert m.status == Match.Status.FINISHED
    history = page(None, reverse("history:matches", args=["alice"]))
    assert badged_names(history) == ["robo"]
    assert badged_names(page(None, "/u/alice/")) == ["robo"]  # recent matches
    # The bot's own history: its name in the title, alice unbadged in its rows.
    assert badged_names(page(None, reverse("history:matches", args=["robo"]))) == ["robo"]
    replay = page(alice, reverse("history:replay", args=[m.pk]))
    h1 = re.search(r"<h1>.*?</h1>", replay, re.S)
    assert h1 and badged_names(h1.group(0)) == ["robo"]


def test_a_computer_player_wears_the_badge_too(tables: Tables, alice: Any) -> None:
    cpu = computer_account(2)  # the site's own (made by a migration)
    m = tables.casual(alice, cpu)
    # The site's computer players are named with their level and wear 🤖 instead of "BOT".
    profile = page(None, f"/u/{cpu.username}/")
    assert 'コンピューター（中級）<span class="bot-badge bot-badge--computer"' in profile
    assert 'data-testid="computer-badge" data-level="2">🤖<' in profile
    html = page(alice, f"/matches/{m.pk}/")
    assert html.count('data-testid="computer-badge"') == 1 and "コンピューター（中級）" in html


def _leaderboard() -> list[str]:
    return re.findall(r'data-player="([^"]+)"', page(None, reverse("history:leaderboard")))


def test_no_bot_is_ever_on_the_leaderboard(
    tables: Tables, robo: tuple[Any, str], alice: Any, bob: Any, settings: Any
) -> None:
    # Quick resigns between the same two, rated anyway: the fair-play rules that
    # would leave them unrated (matches.play.fairplay) are not this test's subject.
    settings.RATED_MIN_DECISIONS, settings.RATED_PAIR_LIMIT = 0, 10**6
    cpu = computer_account(3)
    # Rated matches that no bot can get (the queue refuses them), made directly:
    # even then the leaderboard lists only the people.
    for _ in range(5):
        tables.resign(tables.start(tables.ranked(alice, robo[0])), robo[0])
        tables.resign(tables.start(tables.ranked(bob, cpu)), cpu)
    assert sorted(_leaderboard()) == ["alice", "bob"]
