"""The first minute on a phone (360×740, touch): from sign-up to a first move against
the computer in at most 5 taps, each on the first screen, without a scroll.

Every tap is counted, and before each one the test checks that the target is inside
the first 740 px and that the page has not been scrolled.
"""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.conftest import ARTIFACTS, sign_up

PHONE = {"width": 360, "height": 740}
MAX_TAPS = 5


class Thumb:
    """Taps what a person sees, counting, and refuses what would need a scroll."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.taps: list[str] = []

    def tap(self, selector: str, what: str) -> None:
        target = self.page.locator(selector).first
        target.wait_for(state="visible")
        box = target.bounding_box()
        assert box is not None, what
        assert self.page.evaluate("scrollY") == 0, f"the page was scrolled before: {what}"
        assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (
            f"{what} is not on the first screen: {box}"
        )
        # Playwright would scroll to a target below the fold; the check above forbids it.
        target.tap()
        self.taps.append(what)


def _hand_size(page: Any) -> int:
    return int(page.locator("[data-testid=hand-tile]").count())


def test_sign_up_to_a_first_move_against_the_computer_in_five_taps(
    browser: Any, server: str
) -> None:
    ctx = browser.new_context(
        base_url=server, locale="ja-JP", viewport=PHONE, has_touch=True, is_mobile=True
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    try:
        sign_up(page, "first_minute")
        # The lobby leads with the three ways to play, all on the first screen.
        for testid in ("queue-join", "computer-1", "create-invite"):
            box = page.locator(f"[data-testid={testid}]").bounding_box()
            assert box and box["y"] + box["height"] <= PHONE["height"], testid
        assert page.locator("[data-testid=computer-1]").inner_text() == "初級"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "first-minute-lobby.png"))

        thumb = Thumb(page)
        thumb.tap("[data-testid=computer-1]", "コンピューターと対局: 初級")
        page.wait_for_url("**/matches/*/")
        assert "コンピューター（初級）" in page.locator("#sb-match").inner_text()
        thumb.tap("[data-testid=op-start]", "開始")
        page.wait_for_selector("[data-testid=hand-tile]")
        # The first move: whatever the deal, a playable tile (the forced opening, or the
        # first that fits after the server's automatic draws), then a lit dot if needed.
        deadline = time.monotonic() + 60
        before = None
        while time.monotonic() < deadline:
            if before is not None and _hand_size(page) < before:
                break  # the placement is committed and drawn
            tiles = page.locator(".hand-tile.is-playable:not([disabled])")
            if before is None and tiles.count() and tiles.first.is_visible():
                if page.locator("[data-testid=open-prompt]").count():
                    prompt = page.locator("[data-testid=open-prompt]").inner_text()
                    assert "を出して始めてください" in prompt and "待って" not in prompt
                before = _hand_size(page)
                at = (tiles.first.get_attribute("data-at") or "").split()
                thumb.tap(".hand-tile.is-playable:not([disabled])", "a hand tile")
                if len(at) > 1:
                    thumb.tap(f'.pos.is-lit[data-pos="{at[0]}"]', "a lit dot")
            page.wait_for_timeout(50)
        else:
            raise AssertionError(f"no first move was made; taps: {thumb.taps}")
        page.screenshot(path=str(ARTIFACTS / "first-minute-first-move.png"))
        print(f"\nfirst minute: {len(thumb.taps)} taps after sign-up: {thumb.taps}")
        assert len(thumb.taps) <= MAX_TAPS, thumb.taps
        # A phone's first match shows how to move and the board's marks.
        assert page.locator(".sb-board__legend").is_visible()
    finally:
        ctx.close()
