"""Watching: the lobby's "live now" list and the spectators' match page (no hand, no action)."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client

from tests.support import Tables


def _live_now(html: str) -> list[tuple[str, str]]:
    card = re.search(r'<section class="card" data-testid="watchable">.*?</section>', html, re.S)
    assert card, "the lobby has its live-now card"
    return [
        (href, " ".join(re.sub(r"<[^>]+>", "", text).split()))
        for href, text in re.findall(
            r'<a href="([^"]+)" data-testid="watch-link">(.*?)</a>', card[0], re.S
        )
    ]


def test_the_lobby_lists_live_matches_to_watch_with_ratings(
    client: Client, alice: Any, bob: Any, carol: Any, dave: Any
) -> None:
    tables = Tables()
    live = tables.start(tables.ranked(alice, bob))
    tables.casual(carol, dave)  # not started yet: nothing to watch
    client.force_login(carol)
    assert _live_now(client.get("/").content.decode()) == [
        (f"/matches/{live.pk}/", "観戦：alice 1500（暫定） 対 bob 1500（暫定）")
    ]
    # A player of a live match is taken back to it by the lobby (not shown it to watch);
    # with only a waiting match, the lobby does not offer the player's own match.
    client.force_login(alice)
    assert client.get("/")["Location"] == f"/matches/{live.pk}/"
    client.force_login(dave)
    html = client.get("/").content.decode()
    assert _live_now(html) == [
        (f"/matches/{live.pk}/", "観戦：alice 1500（暫定） 対 bob 1500（暫定）")
    ]


def test_a_spectator_gets_the_watching_view_without_hand_or_action(
    client: Client, alice: Any, bob: Any, carol: Any
) -> None:
    tables = Tables()
    m = tables.start(tables.ranked(alice, bob))
    client.force_login(carol)
    html = client.get(f"/matches/{m.pk}/").content.decode()
    assert 'data-testid="watching">観戦中<' in html
    assert 'data-testid="watching-note"' in html
    assert "hand-tile" not in html
    assert "data-op=" not in html  # no start, resign, bid, reveal or continue anywhere
    assert 'data-testid="name-0">alice<' in html and 'data-testid="name-1">bob<' in html
    assert 'data-testid="rating-0"' in html and ">1500（暫定）<" in html
    # A player of the same match gets the hand and the buttons.
    client.force_login(alice)
    own = client.get(f"/matches/{m.pk}/").content.decode()
    assert "hand-tile" in own and 'data-op="resign"' in own and "watching" not in own
