"""Ranked play in two browsers: the queue pairs them, one resigns at once: not rated.

A resign right after 開始 is the farming probe of issue 16: the start screen
states the rule, the result card says why the match was not rated, and no
rating moved (ratings moving is tested in tests/history and tests/ui).
"""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import sign_up, start_then_resign


def test_two_players_are_paired_in_the_ranked_queue_and_a_resign_at_once_is_not_rated(
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
    for page in (erin, frank):
        rule = page.locator("[data-testid=rated-rule]")
        rule.wait_for()
        assert "3" in rule.inner_text()

    start_then_resign(erin, frank)

    for page in (erin, frank):
        why = page.locator("[data-testid=unrated-reason]")
        why.wait_for()
        assert "レーティング対象外" in why.inner_text()
        assert page.locator("[data-testid=rating-changes]").count() == 0
        assert page.locator("[data-testid=rating-0]").inner_text() == "1500（暫定）"
        assert page.locator("[data-testid=kind]").inner_text() == "レーティング戦"
    for page, name in ((erin, "erin_e2e"), (frank, "frank_e2e")):
        page.goto(f"/u/{name}/matches/")
        row = page.locator(".history-row").first
        assert row.get_attribute("data-kind") == "ranked"
        assert row.get_attribute("data-how") == "resign"
        assert row.locator("[data-rating-change]").get_attribute("data-rating-change") == ""
        page.goto(f"/u/{name}/")
        shown = page.locator("#profile-rating .rating").first
        assert shown.get_attribute("data-rating") == "1500"
        assert shown.inner_text().strip() == "1500（暫定）"  # provisional: 30 rated matches
