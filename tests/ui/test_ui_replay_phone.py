"""The replay on a phone (360×740, touch): the board in the first screen, hands drawn
as domino tiles, chart labels big enough to read, no keyboard hint; the hint stays on
a desktop with a keyboard."""

from __future__ import annotations

import re
from typing import Any

import pytest
from ui_pages import browsing, off_the_loop, scrolls_sideways

from matches.models import Match
from tests.support import Tables, make_user, use_embedded_default

# The size a chart label is drawn at on screen: its font size times the scale its SVG
# is drawn at (a viewBox shrunk to the phone's width shrinks its text with it).
LABEL_PX = """() => Array.from(document.querySelectorAll(
    "#replay .chart-box text, #replay .chart-box .chart__label, #replay svg.chart text"))
  .filter((e) => e.getBoundingClientRect().height > 0)
  .map((e) => {
    const px = parseFloat(getComputedStyle(e).fontSize);
    const m = e.getScreenCTM ? e.getScreenCTM() : null;
    return m ? px * Math.min(Math.abs(m.a), Math.abs(m.d)) : px;
  })"""


def _play() -> Match:
    alice, bob = make_user("alice"), make_user("bob")
    tables = Tables()
    return tables.play(tables.start(tables.casual(alice, bob)), 500, all_in=True)


@pytest.fixture
def finished(transactional_db: Any, settings: Any) -> Match:
    use_embedded_default(settings, deal_seed=5)
    m = off_the_loop(_play)
    assert m.is_over
    return m


def _phone_step_2(browser: Any, live_server: Any, m: Match) -> Any:
    """The phone context, at step 2: the first decision has put a tile on the table."""
    return browsing(browser, live_server, "phone", m.player0)


def test_on_a_phone_the_whole_board_is_in_the_first_screen(
    browser: Any, live_server: Any, finished: Match
) -> None:
    with _phone_step_2(browser, live_server, finished) as page:
        page.goto(f"/matches/{finished.pk}/replay/?step=2")
        assert page.locator("#replay .board svg g.domino").count() >= 1
        board = page.locator("#replay .board").bounding_box()
        # Seen without scrolling (the old layout put only its top edge at 721 px).
        assert board is not None and board["y"] + board["height"] <= 740, board


def test_on_a_phone_the_hands_are_domino_tiles(
    browser: Any, live_server: Any, finished: Match
) -> None:
    with _phone_step_2(browser, live_server, finished) as page:
        page.goto(f"/matches/{finished.pk}/replay/?step=2")
        for seat in (0, 1):
            hand = page.locator(f"#replay [data-hand='{seat}']")
            assert hand.locator("li.tile svg.domino-svg").count() >= 1
            assert not re.search(r"\[\d\|\d\]", hand.inner_text()), hand.inner_text()
            # Each tile still says which it is, for a screen reader.
            labels = hand.locator("li.tile").evaluate_all(
                "(ls) => ls.map((l) => l.getAttribute('aria-label') || '')"
            )
            assert labels and all(re.fullmatch(r"\[\d\|\d\]", x) for x in labels), labels
            # Every drawing is there to be used, with a light face (unpainted, SVG is black).
            faces = hand.locator("li.tile use").evaluate_all(
                """(us) => us.map((u) => {
                  const s = document.querySelector(u.getAttribute("href"));
                  return s ? getComputedStyle(s.querySelector(".domino__body")).fill : null;
                })"""
            )
            assert faces and all(f == "rgb(255, 253, 246)" for f in faces), faces
            drawn = hand.locator("li.tile svg.domino-svg").first.bounding_box()
            assert drawn is not None and drawn["height"] >= 40, drawn  # big enough to count pips


def test_on_a_phone_the_chart_labels_are_readable(
    browser: Any, live_server: Any, finished: Match
) -> None:
    with _phone_step_2(browser, live_server, finished) as page:
        page.goto(f"/matches/{finished.pk}/replay/?step=2")
        sizes = page.evaluate(LABEL_PX)
        assert sizes, "the chart has labels"
        assert min(sizes) >= 11, sizes  # the old SVG text came out at 5 px


def test_on_a_phone_there_is_no_keyboard_hint(
    browser: Any, live_server: Any, finished: Match
) -> None:
    with _phone_step_2(browser, live_server, finished) as page:
        page.goto(f"/matches/{finished.pk}/replay/?step=2")
        assert page.locator("#replay .replay-nav").is_visible()
        assert not page.locator("#replay .replay-hint").is_visible()


def test_on_a_desktop_the_keyboard_hint_is_shown(
    browser: Any, live_server: Any, finished: Match
) -> None:
    with browsing(browser, live_server, "desktop", finished.player0) as page:
        page.goto(f"/matches/{finished.pk}/replay/")
        assert page.locator("#replay .replay-hint").is_visible()
        sizes = page.evaluate(LABEL_PX)
        assert sizes and min(sizes) >= 11, sizes


# The lines the step's position takes: "ステップ" on one and "1 / 193" whole on the
# next is fine; a number cut from its "/" or "of" is not.
POSITION_LINES = """() => {
  const el = document.querySelector('[data-testid="replay-pos"]');
  const text = el.firstChild;
  const at = text.data.search(/[0-9]/);
  const r = document.createRange();
  r.setStart(text, at); r.setEnd(text, text.data.length);
  const tops = new Set(Array.from(r.getClientRects()).map((b) => Math.round(b.top)));
  return {numbers: tops.size, text: text.data};
}"""


@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_on_a_phone_the_steps_position_keeps_its_numbers_on_one_line(
    browser: Any, live_server: Any, finished: Match, locale: str
) -> None:
    with browsing(browser, live_server, "phone", finished.player0, locale) as page:
        page.goto(f"/matches/{finished.pk}/replay/?step=2")
        seen = page.evaluate(POSITION_LINES)
        assert seen["numbers"] == 1, seen
        assert not scrolls_sideways(page)
