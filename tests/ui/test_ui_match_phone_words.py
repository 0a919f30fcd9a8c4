"""What a 360 px phone cut or drew wrongly on the match screen, in English and Japanese.

Real names and ratings are longer than the other UI tests' (``alice``, ``1483``): a
provisional rating reads "1500 (provisional)" and the computer is "Computer
(Intermediate)". With them, on a 360×740 phone:

- the ジョッキー badge is never under the clock, and your own name is not cut to one
  letter (the rating gives way first);
- in the auction both clocks stay on the first screen (the empty table's line gives
  its room to the auction; your clock was below the fold);
- "… scores 10" on the table is shown whole (it went under the line's ellipsis);
- the bid button reads "Bid 15 points" / "15点で入札", one label (its amount was a
  flex item of its own, with a gap on either side);
- the rules sheet's key to the board draws its marks 20 px wide (without board.css
  they filled the sheet).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_match_page import keep_if_failed, load
from ui_pages import SIZES
from ui_scenarios import T0, first_state, seat_view

import engine

LONG = ["Computer (Intermediate)", "hanako_2026"]
PROVISIONAL = [{"value": 1500, "display": "1500?"}, {"value": 1500, "display": "1500?"}]


def _named(view: dict[str, Any]) -> dict[str, Any]:
    view["match"].update(names=list(LONG), ratings=PROVISIONAL)
    return view


def _jockey_raising() -> dict[str, Any]:
    """Seat 1 (you) is the jockey and raises: badge, delay and resign in your bar."""
    s = engine.new_match(engine.Deal.shuffled(random.Random(5)), now_ms=T0, jockey=1)
    s, _ = engine.apply(s, engine.Action("bid", 0, amount=20), T0 + 2000)
    return _named(seat_view(s, 1, T0 + 5000))


def _opening_the_auction() -> dict[str, Any]:
    s = engine.new_match(engine.Deal.shuffled(random.Random(5)), now_ms=T0, jockey=1)
    return _named(seat_view(s, 0, T0 + 3000))


def _scored_by_seat_0() -> dict[str, Any]:
    s, now = first_state(
        lambda s: (
            bool(s.log)
            and s.log[-1]["type"] == "place"
            and s.log[-1]["score"] > 0
            and s.log[-1]["player"] == 0
            and s.to_act == 1
        )
    )
    return _named(seat_view(s, 1, now + 1000))


@pytest.fixture
def open_view(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def make(view: dict[str, Any], lang: str) -> Any:
        ctx = browser.new_context(locale=f"{lang}-JP", **SIZES["phone"])
        contexts.append(ctx)
        return load(ctx.new_page(), view, tmp_path / f"page{len(contexts)}.html", lang)

    yield make
    keep_if_failed(request, [page for ctx in contexts for page in ctx.pages])
    for ctx in contexts:
        ctx.close()


BOX = "(e) => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.width]; }"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_jockey_badge_stays_clear_of_the_clock_and_names_stay_readable(
    open_view: Any, lang: str
) -> None:
    page = open_view(_jockey_raising(), lang)
    for bar in ("#sb-me", "#sb-opponent"):
        clock_left = page.locator(f"{bar} [data-clock]").evaluate(BOX)[0]
        info_right = page.locator(f"{bar} .sb-player__info").evaluate(BOX)[1]
        for part in page.locator(f"{bar} .sb-player__id > *").all():
            assert part.evaluate(BOX)[1] <= info_right + 0.5 <= clock_left, (bar, part)
        # Your name and the opponent's: several letters, not one and an ellipsis.
        assert page.locator(f"{bar} .sb-player__name").evaluate(BOX)[2] >= 40, bar
    assert page.locator("#sb-me [data-testid=jockey-1]").is_visible()


@pytest.mark.parametrize("scene", ["raising", "opening"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_in_the_auction_both_clocks_and_the_bid_are_on_the_first_screen(
    open_view: Any, lang: str, scene: str
) -> None:
    view = _jockey_raising() if scene == "raising" else _opening_the_auction()
    page = open_view(view, lang)
    assert page.evaluate("scrollY") == 0
    for sel in ("#sb-me [data-clock]", "#sb-opponent [data-clock]", "[data-testid=op-bid]"):
        box = page.locator(sel).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 740, (sel, box)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_who_scored_is_shown_whole_on_the_table(open_view: Any, lang: str) -> None:
    page = open_view(_scored_by_seat_0(), lang)
    scored = page.locator("[data-testid=scored]")
    assert LONG[0] in scored.inner_text()
    assert scored.evaluate("(e) => e.scrollWidth <= e.clientWidth")
    line = page.locator("[data-testid=end-total]")
    assert line.evaluate("(e) => e.scrollWidth <= e.clientWidth")


@pytest.mark.parametrize(("lang", "label"), [("en", "Bid 15 points"), ("ja", "15点で入札")])
def test_the_bid_button_reads_as_one_label(open_view: Any, lang: str, label: str) -> None:
    page = open_view(_opening_the_auction(), lang)
    button = page.locator("[data-testid=op-bid]")
    assert button.inner_text().strip() == label
    # One flex item: no gap between the amount and its words.
    assert button.evaluate("(b) => b.children.length") == 1


def test_the_rules_sheet_draws_the_boards_key_small(open_view: Any) -> None:
    page = open_view(_opening_the_auction(), "ja")
    page.click("[data-testid=open-rules]")
    marks = page.locator("#sb-rules .board-legend svg")
    assert marks.count() == 4
    for mark in marks.all():
        assert mark.evaluate(BOX)[2] <= 24
