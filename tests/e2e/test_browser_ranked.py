"""Ranked play in two browsers: the queue pairs them, one resigns, ratings move."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import sign_up, start_then_resign


def test_two_players_are_paired_in_the_ranked_queue_and_see_their_rating_change(
    new_page: Any,
) -> None:
    erin = new_page()
    frank = new_page()
    sign_up(erin, "erin_e2e")
    sign_up(frank, "frank_e2e")

    erin.click("[data-testid=queue-join]")
    erin.wait_for_selector("[data-testid=queue-window]")
    assert "100" in erin.locator("[data-testid=queue-window]").inner_text()
    frank.click("[data-testid=queue-join]")

    # Both are taken to the new match at once.
    erin.wait_for_url("**/matches/*/", timeout=15_000)
    frank.wait_for_url("**/matches/*/", timeout=15_000)
    assert erin.url == frank.url

    start_then_resign(erin, frank)

    expected = {"erin_e2e": (-20, 1480), "frank_e2e": (20, 1520)}
    for page in (erin, frank):
        # The result card shows both changes, next to the names; the loser resigned.
        for name, (change, _) in expected.items():
            line = page.locator("[data-testid=rating-changes] li", has_text=name)
            line.wait_for()
            assert line.get_attribute("data-rating-change") == str(change)
            assert f"{change:+d}".replace("-", "\u2212") in line.inner_text()
        # Both were unrated (1500) when the match was made; after the result the bars
        # show each new rating (still provisional), not the one the match started with.
        for seat in (0, 1):
            who = page.locator(f"[data-testid=name-{seat}]").inner_text().strip()
            shown = page.locator(f"[data-testid=rating-{seat}]").inner_text()
            assert shown == f"{expected[who][1]}（暫定）", (who, shown)
        assert page.locator("[data-testid=kind]").inner_text() == "レーティング戦"
    for page, name in ((erin, "erin_e2e"), (frank, "frank_e2e")):
        change, rating = expected[name]
        page.goto(f"/u/{name}/matches/")
        row = page.locator(".history-row").first
        assert row.get_attribute("data-kind") == "ranked"
        assert row.get_attribute("data-how") == "resign"
        assert row.locator("[data-rating-change]").get_attribute("data-rating-change") == str(
            change
        )
        page.goto(f"/u/{name}/")
        shown = page.locator("#profile-rating .rating").first
        assert shown.get_attribute("data-rating") == str(rating)
        # Provisional for its first 30 rated matches.
        assert shown.inner_text().strip() == f"{rating}（暫定）"
