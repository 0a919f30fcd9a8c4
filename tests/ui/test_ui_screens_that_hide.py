"""Screens that hid what matters (issue 17, item 5), in Chromium at 360×740 and 1280×800.

- The settlement card shows the balances without scrolling, and the 次へ bar never
  covers them.
- The result leaves the final board in view, and the players' bars show the rating
  after a ranked result, not the one the match started with.
- On a dark page, a hand tile that cannot be played is dimmed but its pips still read.
- A player's own profile leads with the record and the rating, not the bot-account card.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from ui_match_page import keep_if_failed, load
from ui_pages import ARTIFACTS, SIZES
from ui_scenarios import first_state, seat_view

import engine

RATINGS = [{"value": 1520, "display": "1520?"}, {"value": 1483, "display": "1483"}]


def _ranked(view: dict[str, Any], **match: Any) -> dict[str, Any]:
    view["match"].update(
        {"kind": "ranked", "ratings": RATINGS, "watching": False, "rating_delta": None, **match}
    )
    return view


@pytest.fixture(scope="module")
def scenes() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    s, now = first_state(
        lambda s: s.phase == "hand_over" and s.hand_end == "block" and s.hand_no >= 1
    )
    out["settlement"] = _ranked(seat_view(s, 0, now, deadline=now + 30_000, ready=(False, True)))
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 8)
    s, _ = engine.apply(s, engine.Action("resign", 1), now + 1000)
    out["result"] = _ranked(seat_view(s, 0, now + 1000), rating_delta=[12, -12])
    s, now = first_state(
        lambda s: (
            s.phase == "play"
            and s.to_act == 0
            and not s.must_place
            and len(s.layout.placed) >= 2
            and 0 < len(engine.view_for(s, 0, now_of(s))["playable"]) < len(s.hands[0])
        )
    )
    out["dim"] = _ranked(seat_view(s, 0, now + 2000))
    return out


def now_of(s: engine.MatchState) -> int:
    return int(s.decision_start or 0)


@pytest.fixture
def open_scene(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def make(view: dict[str, Any], size: str, **options: Any) -> Any:
        ctx = browser.new_context(locale="ja-JP", **SIZES[size], **options)
        contexts.append(ctx)
        return load(ctx.new_page(), view, tmp_path / f"page{len(contexts)}.html", "ja")

    yield make
    keep_if_failed(request, [page for ctx in contexts for page in ctx.pages])
    for ctx in contexts:
        ctx.close()


def _keep(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"match-{name}.png"))


# Is the element's centre (and so the element) what a person sees at that point?
_ON_TOP = """(sel) => Array.from(document.querySelectorAll(sel)).map((e) => {
  const r = e.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  return {inside: x >= 0 && y >= 0 && x <= innerWidth && y <= innerHeight,
          seen: !!hit && (hit === e || e.contains(hit))};
})"""


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_settlement_shows_the_balances_above_the_continue_bar(
    open_scene: Any, scenes: dict[str, Any], size: str
) -> None:
    page = open_scene(scenes["settlement"], size)
    _keep(page, f"settlement-balances-{size}")
    balances = page.locator("[data-testid=settle-balances]")
    assert "残高" in balances.inner_text()
    spots = page.evaluate(_ON_TOP, "[data-testid=settle-balances]")
    assert spots == [{"inside": True, "seen": True}], spots
    bar = page.locator("[data-testid=continue]").bounding_box()
    box = balances.bounding_box()
    assert bar and box and box["y"] + box["height"] <= bar["y"] + 0.5


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_result_leaves_the_final_board_in_view(
    open_scene: Any, scenes: dict[str, Any], size: str
) -> None:
    page = open_scene(scenes["result"], size)
    _keep(page, f"result-board-{size}")
    assert page.locator("[data-testid=result]").is_visible()
    tiles = page.evaluate(_ON_TOP, "#sb-board g.domino")
    assert len(tiles) > 8
    hidden = [i for i, t in enumerate(tiles) if not (t["inside"] and t["seen"])]
    assert hidden == [], f"{len(hidden)} of {len(tiles)} tiles of the final board are covered"
    # The result's own buttons stay on screen too.
    for spot in page.evaluate(_ON_TOP, "#sb-settlement .sb-result__links a"):
        assert spot["inside"], spot


def test_after_a_ranked_result_the_bars_show_the_new_rating(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    page = open_scene(scenes["result"], "phone")
    assert page.locator("#sb-me [data-testid=rating-0]").inner_text() == "1532（暫定）"
    assert page.locator("#sb-opponent [data-testid=rating-1]").inner_text() == "1471"
    # The result card still says where each came from.
    assert "1520（暫定） → 1532" in page.locator("[data-testid=rating-changes]").inner_text()


# Darkest and lightest tenth of a PNG's pixels, by luminance, as WCAG's contrast ratio.
_CONTRAST = """async (src) => {
  const img = new Image();
  img.src = src;
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width; c.height = img.height;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lums = [];
  for (let i = 0; i < d.length; i += 4) {
    lums.push(0.2126 * lin(d[i]) + 0.7152 * lin(d[i + 1]) + 0.0722 * lin(d[i + 2]));
  }
  lums.sort((a, b) => a - b);
  const dark = lums[Math.floor(lums.length * 0.03)];
  const light = lums[Math.floor(lums.length * 0.9)];
  return (light + 0.05) / (dark + 0.05);
}"""


def test_a_dimmed_hand_tile_stays_readable_on_a_dark_page(
    open_scene: Any, scenes: dict[str, Any]
) -> None:
    page = open_scene(scenes["dim"], "phone", color_scheme="dark")
    _keep(page, "dim-tiles-dark")
    dim = page.locator(".hand-tile.is-dim .domino-svg").first
    playable = page.locator(".hand-tile.is-playable .domino-svg").first
    ratios = []
    for tile in (dim, playable):
        png = base64.b64encode(tile.screenshot()).decode()
        ratios.append(page.evaluate(_CONTRAST, f"data:image/png;base64,{png}"))
    dim_ratio, playable_ratio = ratios
    # Pips on a dimmed tile: WCAG's 4.5:1 for text; and still visibly unlike a playable one.
    assert dim_ratio >= 4.5, f"dimmed tile's pips at {dim_ratio:.1f}:1"
    assert playable_ratio > dim_ratio * 1.2, (playable_ratio, dim_ratio)


@pytest.mark.django_db
def test_your_own_profile_leads_with_your_record_not_the_bot_card(
    client: Client, alice: Any
) -> None:
    client.force_login(alice)
    html = client.get("/u/alice/").content.decode()
    assert 'data-testid="bot-account"' in html  # offered to its owner, but last
    assert html.index('id="profile-rating"') < html.index('data-testid="bot-account"')
    assert html.index('data-stat="played"') < html.index('data-testid="bot-account"')
