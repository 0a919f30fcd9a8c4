"""The match screen on a 360×740 touch phone and a 1280×800 desktop, in Japanese (issue 9).

Each scene is a real view (seeded engine matches, ``ui_scenarios``) rendered into the
real page and opened in Chromium with match.js running (``ui_match_page``). While you
decide — your turn in play, at a hand's start and with 20+ tiles on the table, and in the
auction — both clocks, every tile and position on the board and every tile of your hand
are inside the window without scrolling; every interactive element of every scene is a
full 44×44 px target; no label wraps inside a button; nothing scrolls sideways.

A screenshot of every scene at both sizes is kept in tests/e2e/artifacts/ (match-*.png).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_match_page import keep_if_failed, load, sent, swap_in
from ui_pages import ARTIFACTS, SIZES, scrolls_sideways, small_targets
from ui_scenarios import T0, first_state, random_match, seat_view, waiting_view

import engine
from table import geometry as board

RATINGS = [{"value": 1520, "display": "1520?"}, {"value": 1483, "display": "1483"}]
DECIDING = ("turn-start", "turn-big", "auction-raise", "auction-open")


def _ranked(view: dict[str, Any], **match: Any) -> dict[str, Any]:
    """The ``match`` block as services.view_for fills it for a ranked match."""
    view["match"].update(
        {"kind": "ranked", "ratings": RATINGS, "watching": False, "rating_delta": None, **match}
    )
    return view


def _tallest_board(min_tiles: int = 20) -> tuple[engine.MatchState, int]:
    """Seat 0 to play with ``min_tiles`` or more on the table: the tallest such board seen."""
    best: tuple[float, engine.MatchState, int] | None = None
    for seed in range(40):
        for s, now in random_match(seed):
            if s.phase != "play" or s.to_act != 0 or s.must_place:
                continue
            if len(s.layout.placed) < min_tiles or not engine.view_for(s, 0, now)["playable"]:
                continue
            v = engine.view_for(s, 0, now)
            height = board.geometry(v["layout"], v["legal"], v["ends"])["height"]
            if best is None or height > best[0]:
                best = (height, s, now)
    assert best is not None, "no seeded match has that many tiles on the table"
    return best[1], best[2]


def _auction(raised: bool) -> dict[str, Any]:
    """Seat 0 decides in the auction: as the jockey facing a bid of 20, or opening it."""
    jockey = 0 if raised else 1
    s = engine.new_match(engine.Deal.shuffled(random.Random(5)), now_ms=T0, jockey=jockey)
    if raised:
        s, _ = engine.apply(s, engine.Action("bid", 1, amount=20), T0 + 2000)
    return _ranked(seat_view(s, 0, T0 + 5000))


@pytest.fixture(scope="module")
def scenes() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    s, now = first_state(
        lambda s: s.phase == "play" and s.to_act == 0 and 1 <= len(s.layout.placed) <= 3
    )
    out["turn-start"] = _ranked(seat_view(s, 0, now + 3000))  # 3 s into the delay
    s, now = _tallest_board()
    out["turn-big"] = _ranked(seat_view(s, 0, now + 3000))
    out["auction-raise"] = _auction(raised=True)
    out["auction-open"] = _auction(raised=False)
    s, now = first_state(
        lambda s: s.phase == "hand_over" and s.hand_end == "block" and s.hand_no >= 1
    )
    out["settlement"] = _ranked(seat_view(s, 0, now, deadline=now + 30_000, ready=(False, True)))
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 8)
    s, _ = engine.apply(s, engine.Action("resign", 1), now + 1000)
    out["result"] = _ranked(seat_view(s, 0, now + 1000), rating_delta=[12, -12])
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) >= 12)
    out["spectator"] = _ranked(seat_view(s, None, now + 2000), watching=True)
    out["start"] = _ranked(waiting_view(0, ready=(False, True)))
    same = waiting_view(0)
    same["match"].update(kind="same_device", ratings=[RATINGS[0], None], watching=False)
    out["start-same-device"] = same
    return out


@pytest.fixture
def open_scene(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    """Open a view as the page at ``size``, in Japanese; a screenshot is kept on failure."""
    contexts: list[Any] = []

    def make(view: dict[str, Any], size: str) -> Any:
        ctx = browser.new_context(locale="ja-JP", **SIZES[size])
        contexts.append(ctx)
        return load(ctx.new_page(), view, tmp_path / f"page{len(contexts)}.html", "ja")

    yield make
    keep_if_failed(request, [page for ctx in contexts for page in ctx.pages])
    for ctx in contexts:
        ctx.close()


def keep(page: Any, name: str) -> None:
    """The screen as a player sees it, without scrolling (tests/e2e/artifacts/match-*.png)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"match-{name}.png"))


# The boxes of what a deciding player must see, and the window's size.
_BOXES = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {top: r.top, left: r.left, bottom: r.bottom, right: r.right, w: r.width, h: r.height}; };
  const all = (sel) => Array.from(document.querySelectorAll(sel)).map(box);
  return {
    win: {w: innerWidth, h: innerHeight},
    clocks: all("[data-clock]"),
    delay: all(".sb-clock.is-running [data-clock-delay]:not([hidden])"),
    tiles: all("#sb-board g.domino"),
    positions: all("#sb-board g.pos .pos__dot"),
    hand: all(".hand-tile"),
    actions: all("#sb-auction [data-op], #sb-auction [data-bid-amount], #sb-auction [data-step]"),
    status: all("#sb-status"),
  };
}"""


def outside(boxes: list[dict[str, float]], win: dict[str, float]) -> list[dict[str, float]]:
    return [
        b
        for b in boxes
        if b["top"] < -0.5 or b["left"] < -0.5 or b["bottom"] > win["h"] + 0.5
        or b["right"] > win["w"] + 0.5
    ]  # fmt: skip


@pytest.mark.parametrize("size", ["phone", "desktop"])
@pytest.mark.parametrize("scene", DECIDING)
def test_while_you_decide_both_clocks_the_board_and_your_hand_are_on_screen(
    open_scene: Any, scenes: dict[str, Any], scene: str, size: str
) -> None:
    view = scenes[scene]
    page = open_scene(view, size)
    keep(page, f"{scene}-{size}")
    got = page.evaluate(_BOXES)
    win = got["win"]
    assert page.evaluate("scrollY") == 0
    assert len(got["clocks"]) == 2 and outside(got["clocks"], win) == []
    assert len(got["delay"]) == 1, "your clock shows the delay counting down"
    assert len(got["status"]) == 1 and outside(got["status"], win) == []
    assert len(got["hand"]) == len(view["hand"]) and outside(got["hand"], win) == []
    if scene.startswith("turn"):
        assert len(got["tiles"]) == len(view["layout"]) and outside(got["tiles"], win) == []
        assert len(got["positions"]) == len(view["legal"])
        assert outside(got["positions"], win) == []
        # Scaled to fit, the tiles stay readable: a half is at least 12 px a side.
        assert min(min(t["w"], t["h"]) for t in got["tiles"]) >= 12
    else:
        assert got["actions"] and outside(got["actions"], win) == []
    assert not scrolls_sideways(page)


def test_the_big_board_is_a_big_board(scenes: dict[str, Any]) -> None:
    """The measurements above are of a full table, not of an early one."""
    assert len(scenes["turn-big"]["layout"]) >= 20
    assert len(scenes["turn-start"]["layout"]) <= 3


_WRAPPED = """() => Array.from(document.querySelectorAll("button, a.button")).flatMap((b) => {
  const r = b.getBoundingClientRect();
  if (!r.width || !r.height) return [];
  const out = [];
  const walk = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const tops = new Set(Array.from(range.getClientRects()).map((x) => Math.round(x.top)));
    if (tops.size > 1) out.push(n.textContent.trim());
  }
  return out;
})"""


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_every_target_is_full_size_and_no_label_wraps(
    open_scene: Any, scenes: dict[str, Any], size: str
) -> None:
    problems: list[str] = []
    for name, view in scenes.items():
        page = open_scene(view, size)
        if name not in DECIDING:
            keep(page, f"{name}-{size}")
        problems += [f"{name}: {what}" for what in small_targets(page)]
        problems += [f"{name}: wraps in a button: {t}" for t in page.evaluate(_WRAPPED)]
        if scrolls_sideways(page):
            problems.append(f"{name}: scrolls sideways")
        if name == "turn-big":
            page.click("[data-open-rules]")
            keep(page, f"rules-{size}")
            problems += [f"rules sheet: {what}" for what in small_targets(page)]
        page.close()
    assert problems == []


def test_board_positions_stay_full_targets_and_a_near_tap_places(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    """On the phone the tallest board is drawn small; each position still takes a 44 px tap."""
    view = scenes["turn-big"]
    page = open_scene(view, "phone")
    dots = page.eval_on_selector_all(
        "#sb-board g.pos",
        "gs => gs.map((g) => { const r = g.getBoundingClientRect(); return [r.width, r.height]; })",
    )
    assert dots and min(min(w, h) for w, h in dots) >= 44
    unit = page.evaluate(
        "(() => { const s = document.querySelector('.sb-board__svg');"
        " return Math.min(s.getBoundingClientRect().width / s.viewBox.baseVal.width,"
        " s.getBoundingClientRect().height / s.viewBox.baseVal.height); })()"
    )
    assert unit * 28 < 44, "drawn at this size, the dots alone would be under 44 px"
    p = view["playable"][0]
    tile = f"{p['tile'][0]}-{p['tile'][1]}"
    at = p["at"][0]
    pos = f"{at['tile'][0]}-{at['tile'][1]}:{at['side']}"
    if len(p["at"]) == 1:
        # A tile that fits one place is placed with one tap: select it by hand instead.
        page.evaluate(
            "t => { const b = document.querySelector(`.hand-tile[data-tile='${t}']`);"
            " b.dataset.at = b.dataset.at + ' ' + b.dataset.at; }",
            tile,
        )
    page.click(f'.hand-tile[data-tile="{tile}"]')
    box = page.locator(f'.pos[data-pos="{pos}"] .pos__dot').bounding_box()
    # 18 px beside the dot's centre: outside the drawn dot, inside the 44 px target.
    page.touchscreen.tap(box["x"] + box["width"] / 2 + 18, box["y"] + box["height"] / 2)
    (frame,) = sent(page)
    assert frame["op"] == "place" and frame["tile"] == p["tile"]
    assert frame["at"] == {"tile": at["tile"], "side": at["side"]}


def test_the_start_screen_states_the_time_control_and_opens_the_rules(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    page = open_scene(scenes["start"], "phone")
    tc = page.locator("[data-testid=time-control]")
    assert tc.is_visible()
    text = tc.inner_text()
    assert "持ち時間" in text and "2分" in text and "120秒" in text
    assert "猶予" in text and "10秒" in text and "持ち時間が減らず" in text
    players = page.locator("[data-testid=start-players]").inner_text()
    assert "1520（暫定）" in players and "1483" in players and "レーティング戦" in players
    page.click("[data-testid=start-rules]")
    sheet = page.locator("[data-testid=rules-sheet]")
    assert sheet.is_visible()
    # Over the start screen, whole.
    box = sheet.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 740
    assert page.evaluate("document.elementFromPoint(180, 400).closest('#sb-rules') !== null"), (
        "the sheet lies above the start screen"
    )
    page.click("[data-testid=rules-close]")
    assert not sheet.is_visible()


def test_the_same_device_start_screen_says_one_press_starts_both(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    page = open_scene(scenes["start-same-device"], "phone")
    assert page.locator("[data-testid=same-device-start]").is_visible()
    assert page.locator("[data-testid^=ready-]").count() == 0  # no "まだ" for anyone
    page.click("[data-testid=op-start]")
    assert sent(page) == [{"op": "start", "version": 7}]


def test_the_rules_open_over_the_table_and_both_clocks_stay_in_view(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    page = open_scene(scenes["turn-start"], "phone")
    page.click("[data-testid=open-rules]")
    sheet = page.locator("[data-testid=rules-sheet]")
    assert sheet.is_visible()
    assert (
        "読んでいる間も時計は止まりません"
        in page.locator("[data-testid=rules-clock-note]").inner_text()
    )
    table = page.locator(".sb-table").bounding_box()
    box = sheet.bounding_box()
    assert abs(box["y"] - table["y"]) < 1 and abs(box["height"] - table["height"]) < 1
    for seat in (0, 1):
        clock = page.locator(f"[data-testid=clock-{seat}]").bounding_box()
        x, y = clock["x"] + clock["width"] / 2, clock["y"] + clock["height"] / 2
        assert page.evaluate(
            f"document.elementFromPoint({x}, {y}).closest('[data-clock]') !== null"
        ), f"clock {seat} is covered"
    # The clock keeps running meanwhile (the delay counts down).
    before = page.text_content("[data-testid=clock-0] [data-clock-delay-value]")
    page.wait_for_function(
        "b => document.querySelector('[data-testid=clock-0] [data-clock-delay-value]')"
        ".textContent !== b",
        arg=before,
    )
    page.keyboard.press("Escape")
    assert not sheet.is_visible()


def test_resign_is_confirmed_with_a_red_button(open_scene: Any, scenes: dict[str, Any]) -> None:
    page = open_scene(scenes["turn-start"], "phone")
    page.click("[data-testid=resign]")
    confirm = page.locator("[data-testid=resign-confirm]")
    assert confirm.is_visible()
    red, green, blue = (
        int(c)
        for c in confirm.evaluate("e => getComputedStyle(e).backgroundColor")
        .removeprefix("rgb(")
        .removesuffix(")")
        .split(",")
    )
    assert red > 150 and green < 80 and blue < 80


def test_the_result_card_shows_each_rating_change(open_scene: Any, scenes: dict[str, Any]) -> None:
    page = open_scene(scenes["result"], "phone")
    card = page.locator("[data-testid=result]")
    assert card.is_visible()
    assert page.get_attribute("[data-testid=rating-change-0]", "data-rating-change") == "12"
    assert page.get_attribute("[data-testid=rating-change-1]", "data-rating-change") == "-12"
    mine = page.locator("[data-testid=rating-change-0]").inner_text()
    assert "+12" in mine and "1520（暫定） → 1532" in mine
    assert "−12" in page.locator("[data-testid=rating-change-1]").inner_text()
    assert card.inner_text().count("投了") == 1  # "bobが投了", not "投了 投了"


def test_a_spectator_sees_a_watching_banner_no_hand_and_no_action(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    for size in ("phone", "desktop"):
        page = open_scene(scenes["spectator"], size)
        assert page.locator("[data-testid=watching]").inner_text() == "観戦中"
        assert page.locator("[data-testid=watching-note]").is_visible()
        assert page.locator(".hand-tile").count() == 0
        assert page.locator("[data-op]:visible").count() == 0
        assert page.locator("[data-notify-toggle]").count() == 0
        for seat, rating in enumerate(("1520（暫定）", "1483")):
            assert page.locator(f"[data-testid=rating-{seat}]").inner_text() == rating
            assert page.locator(f"[data-testid=name-{seat}]").is_visible()


def _turn_passes() -> tuple[dict[str, Any], dict[str, Any]]:
    """The opponent's decision, then (a version later) seat 0's own."""
    prev: tuple[engine.MatchState, int] | None = None
    for s, now in random_match(7):
        if prev and prev[0].to_act == 1 and s.to_act == 0 and s.phase == "play" == prev[0].phase:
            return _ranked(seat_view(prev[0], 0, prev[1])), _ranked(seat_view(s, 0, now, version=8))
        prev = (s, now)
    raise AssertionError("no turn passes to seat 0")


@pytest.mark.parametrize("opted_in", [False, True])
def test_your_turn_changes_the_title_and_alerts_only_when_asked(
    open_scene: Any, scenes: dict[str, Any], opted_in: bool
) -> None:
    theirs, mine = _turn_passes()
    page = open_scene(theirs, "desktop")
    title = page.title()
    assert not title.startswith("▶")
    page.evaluate(
        "window.buzz = []; navigator.vibrate = (p) => { window.buzz.push(p); return true; }; 0"
    )
    if opted_in:
        toggle = page.locator("[data-testid=notify-toggle-side]")
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "true"
        assert toggle.inner_text() == "手番の通知：オン"
        page.evaluate("window.buzz = []")
    swap_in(page, mine, "ja")
    assert page.title() == f"▶ あなたの番です · {title}"
    assert len(page.evaluate("window.buzz")) == (1 if opted_in else 0)
    swap_in(page, _ranked({**theirs, "match": {**theirs["match"], "version": 9}}), "ja")
    assert page.title() == title


@pytest.mark.parametrize(
    ("scene", "term", "word"),
    [
        ("turn-start", "hand", "ハンド"),
        ("turn-start", "talon", "タロン"),
        ("auction-open", "jockey", "ジョッキー"),
        ("turn-start", "spinner", "分岐ダブル"),
    ],
)
def test_a_word_of_the_game_tapped_opens_the_rules_at_its_glossary_line(
    open_scene: Any, scenes: dict[str, Any], scene: str, term: str, word: str
) -> None:
    page = open_scene(scenes[scene], "phone")
    button = page.locator(f"[data-open-rules][data-term={term}]:not(.sb-term--badge)")
    assert word in button.inner_text()
    box = button.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44, box  # a whole tap target
    sheet = page.locator("[data-testid=rules-sheet]")
    assert not sheet.is_visible()
    button.click()
    assert sheet.is_visible()
    entry = sheet.locator(f"#term-{term}")
    assert word in entry.locator("dt").inner_text()
    assert "is-pointed" in (entry.get_attribute("class") or "")
    assert sheet.locator(".is-pointed").count() == 1  # only the tapped word's line
    # Its line is in the sheet's view, not left below the fold.
    line, shown = entry.bounding_box(), sheet.bounding_box()
    assert shown["y"] <= line["y"] < shown["y"] + shown["height"], (line, shown)


def _biggest_hand() -> tuple[engine.MatchState, int]:
    """Seat 0 to play holding the most tiles seen (a hand grown by many draws)."""
    best: tuple[int, engine.MatchState, int] | None = None
    for seed in range(60):
        for s, now in random_match(seed):
            if s.phase != "play" or s.to_act != 0 or s.must_place:
                continue
            if best is None or len(s.hands[0]) > best[0]:
                best = (len(s.hands[0]), s, now)
    assert best is not None and best[0] >= 12, "no seeded match grows a hand that far"
    return best[1], best[2]


def test_a_hand_grown_by_many_draws_leaves_resign_uncovered_on_a_phone(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The bars grow with the hand; the stage grows with them, so the record below it
    never lies over 投了 (it did in an arena match at 360 px, whose arena bar takes
    height too: the click never landed). A 360×480 window: 14 tiles overflowed it by 80 px."""
    s, now = _biggest_hand()
    short = {**SIZES["phone"], "viewport": {"width": 360, "height": 480}}
    ctx = browser.new_context(locale="ja-JP", **short)
    page = load(ctx.new_page(), _ranked(seat_view(s, 0, now + 3000)), tmp_path / "p.html", "ja")
    request.addfinalizer(ctx.close)
    assert page.locator(".hand-tile").count() == len(s.hands[0])
    page.click("[data-testid=resign]", timeout=5_000)
    assert page.locator("[data-testid=resign-confirm]").is_visible()
    assert not scrolls_sideways(page)
