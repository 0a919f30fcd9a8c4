"""Rematch in two browsers: after a ranked match one offers, the other accepts or declines."""

from __future__ import annotations

import re
from typing import Any

from tests.e2e.conftest import sign_up, start_then_resign

MATCH_URL = re.compile(r"/matches/(\d+)/$")


def match_id(page: Any) -> int:
    m = MATCH_URL.search(page.url)
    assert m, page.url
    return int(m.group(1))


def ranked_match_resigned(new_page: Any, a: str, b: str) -> tuple[Any, Any]:
    """``a`` and ``b`` are paired by the ranked queue, both press Start, ``a`` resigns."""
    pa, pb = new_page(), new_page()
    sign_up(pa, a)
    sign_up(pb, b)
    pa.click("[data-testid=queue-join]")
    pa.wait_for_selector("[data-testid=queue-window]")
    pb.click("[data-testid=queue-join]")
    for page in (pa, pb):
        page.wait_for_url(MATCH_URL, timeout=15_000)
    assert pa.url == pb.url
    start_then_resign(pa, pb)
    for page in (pa, pb):
        # Over: the replay of this match and one's history are a tap away.
        link = page.locator("[data-testid=replay-link]")
        assert link.get_attribute("href") == f"/matches/{match_id(page)}/replay/"
        page.wait_for_selector("[data-testid=rematch-status][data-status=none]")
        assert page.locator("[data-testid=rematch-ranked]").is_visible()
    return pa, pb


def test_a_rematch_offered_and_accepted_takes_both_players_to_the_new_match(
    new_page: Any,
) -> None:
    rita, sam = ranked_match_resigned(new_page, "rita_e2e", "sam_e2e")
    old = match_id(rita)

    # The winner offers; the offer shows on both pages.
    sam.click("[data-testid=op-rematch]")
    sam.wait_for_selector("[data-testid=rematch-status][data-status=open][data-mine='1']")
    assert "再戦を申し込みました" in sam.inner_text("[data-testid=rematch-status]")
    assert sam.locator("[data-testid=op-rematch-accept]").count() == 0
    rita.wait_for_selector("[data-testid=op-rematch-accept]")
    assert rita.locator("[data-testid=op-rematch-decline]").is_visible()

    rita.click("[data-testid=op-rematch-accept]")
    new_url = re.compile(rf"/matches/(?!{old}/)\d+/$")
    for page in (rita, sam):
        page.wait_for_url(new_url, timeout=15_000)
    assert rita.url == sam.url
    new = match_id(rita)
    assert new != old
    # The new match waits for both to press Start, like any match.
    for page in (rita, sam):
        page.wait_for_selector("[data-testid=op-start]:visible")
        assert page.get_attribute("[data-testid=status]", "data-status") == "waiting"

    # The old page, opened again, stays put and links to the rematch.
    rita.goto(f"/matches/{old}/")
    rita.wait_for_selector("[data-testid=rematch-status][data-status=accepted]")
    rita.wait_for_timeout(1000)  # the socket's first view arrives: no navigation
    assert match_id(rita) == old
    assert rita.get_attribute("[data-testid=rematch-link]", "href") == f"/matches/{new}/"


def test_a_declined_rematch_is_shown_to_the_offerer(new_page: Any) -> None:
    tina, umar = ranked_match_resigned(new_page, "tina_e2e", "umar_e2e")
    old_url = tina.url

    tina.click("[data-testid=op-rematch]")
    umar.wait_for_selector("[data-testid=op-rematch-decline]")
    umar.click("[data-testid=op-rematch-decline]")

    tina.wait_for_selector("[data-testid=rematch-status][data-status=declined]")
    assert "相手は再戦を断りました" in tina.inner_text("[data-testid=rematch-status]")
    umar.wait_for_selector("[data-testid=rematch-status][data-status=declined]")
    assert "相手は再戦を断りました" not in umar.inner_text("[data-testid=rematch-status]")
    for page in (tina, umar):
        assert page.url == old_url
        for op in ("op-rematch", "op-rematch-accept", "op-rematch-decline"):
            assert page.locator(f"[data-testid={op}]").count() == 0

    # The replay link opens this match's replay.
    tina.click("[data-testid=replay-link]")
    tina.wait_for_url(re.compile(r"/matches/\d+/replay/$"))
    assert tina.url == old_url + "replay/"
