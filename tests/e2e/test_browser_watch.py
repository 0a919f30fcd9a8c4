"""A third person finds a live match in the lobby and watches it, on a phone and a desktop.

Alice and Bob play by invite; Carol, logged in, holds no seat: the lobby's "live now"
list links to the match, and the match page is the spectators' view (観戦中), with the
names and ratings, no hand and no action, updated as the players move. Screenshots of
her screen at both widths are kept in tests/e2e/artifacts/.
"""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.conftest import ARTIFACTS, sign_up, start_casual_match
from tests.e2e.test_browser_match import Player, _version

PHONE = {"width": 360, "height": 740}


def test_a_spectator_finds_the_match_in_the_lobby_and_watches_without_hand_or_action(
    new_page: Any,
) -> None:
    alice, bob, carol = new_page(), new_page(), new_page(width=1280, height=800)
    sign_up(alice, "alice_watch")
    sign_up(bob, "bob_watch")
    url = start_casual_match(alice, bob)

    sign_up(carol, "carol_watch")  # ends on the lobby
    link = carol.locator("[data-testid=watchable] [data-testid=watch-link]")
    assert link.count() == 1
    assert "alice_watch" in link.inner_text() and "bob_watch" in link.inner_text()
    link.click()
    carol.wait_for_url(url)
    carol.wait_for_selector("#sb-status[data-status=live]")

    def check_spectator_view() -> None:
        assert carol.locator("[data-testid=watching]").inner_text() == "観戦中"
        assert carol.locator("[data-testid=watching-note]").is_visible()
        assert carol.locator(".hand-tile").count() == 0
        assert carol.locator("[data-op]:visible").count() == 0
        for seat in (0, 1):
            assert carol.locator(f"[data-testid=name-{seat}]").is_visible()
            assert carol.locator(f"[data-testid=rating-{seat}]").inner_text() == "1500（暫定）"

    check_spectator_view()
    # The players move on; her screen follows (the spectators' audience gets every change).
    players = [Player(alice), Player(bob)]
    seen = _version(carol)
    deadline = time.monotonic() + 30
    while _version(carol) < seen + 3 and time.monotonic() < deadline:
        before = max(_version(p.page) for p in players)
        if not any(p.act() for p in players):
            alice.wait_for_timeout(50)
        step = time.monotonic() + 10
        while max(_version(p.page) for p in players) == before and time.monotonic() < step:
            alice.wait_for_timeout(50)
    assert _version(carol) >= seen + 3, "the spectator's page did not follow the match"
    check_spectator_view()
    ARTIFACTS.mkdir(exist_ok=True)
    carol.screenshot(path=str(ARTIFACTS / "match-spectator-live-desktop.png"))
    carol.set_viewport_size(PHONE)
    carol.reload()
    carol.wait_for_selector("#sb-status[data-status=live]")
    check_spectator_view()
    stage = carol.locator("[data-testid=stage]").bounding_box()
    assert stage["y"] + stage["height"] <= PHONE["height"] + 0.5
    carol.screenshot(path=str(ARTIFACTS / "match-spectator-live-phone.png"))
