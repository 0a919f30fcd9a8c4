"""static/js/match.js in Chromium: picking tiles, the frames it sends, the clocks, phone width.

The page is the real template rendered from an engine view and opened from a
file; a fake socket stands in for htmx's (the script only needs its ``send``).
On failure a screenshot is kept in ``tests/e2e/artifacts/``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.template.loader import render_to_string
from django.utils import translation
from ui_match_page import FAKE_SOCKET, ROOT, keep_if_failed, load, sent, swap_in
from ui_scenarios import T0, first_state, rematch_block, seat_view, waiting_view

import engine
from matches.ui import fragments as render
from matches.ui.text import clock_ms


@pytest.fixture
def open_page(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    pages: list[Any] = []

    def make(view: dict[str, Any], *, width: int = 390, lang: str = "en") -> Any:
        page = browser.new_page(viewport={"width": width, "height": 900})
        pages.append(page)
        return load(page, view, tmp_path / f"page{len(pages)}.html", lang)

    yield make
    keep_if_failed(request, pages)
    for page in pages:
        page.close()


def key(tile: Any) -> str:
    return f"{tile[0]}-{tile[1]}"


def pos_key(at: dict[str, Any]) -> str:
    return f"{at['tile'][0]}-{at['tile'][1]}:{at['side']}"


def choice_state(s: engine.MatchState) -> bool:
    if s.phase != "play" or s.to_act != 0 or s.must_place or s.layout.spinner is None:
        return False
    v = engine.view_for(s, 0, 0)
    return any(len(p["at"]) >= 2 for p in v["playable"]) and any(
        len(p["at"]) == 1 for p in v["playable"]
    )


@pytest.fixture(scope="module")
def mid() -> tuple[engine.MatchState, int]:
    return first_state(choice_state)


def test_a_selected_tile_lights_its_positions_and_a_lit_dot_places_it(
    open_page: Any, mid: Any
) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    p = next(p for p in v["playable"] if len(p["at"]) >= 2)
    page = open_page(v)
    page.click(f'.hand-tile[data-tile="{key(p["tile"])}"]')
    lit = page.eval_on_selector_all(".pos.is-lit", "els => els.map(e => e.dataset.pos)")
    assert sorted(lit) == sorted(pos_key(a) for a in p["at"])
    assert page.get_attribute(f'.hand-tile[data-tile="{key(p["tile"])}"]', "aria-pressed") == "true"
    assert sent(page) == []
    target = p["at"][-1]
    page.click(f'.pos[data-pos="{pos_key(target)}"]', force=True)
    assert sent(page) == [
        {
            "op": "place",
            "tile": p["tile"],
            "at": {"tile": target["tile"], "side": target["side"]},
            "version": 7,
        }
    ]


def test_a_tile_that_fits_one_place_is_placed_with_one_tap(open_page: Any, mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    p = next(p for p in v["playable"] if len(p["at"]) == 1)
    page = open_page(v)
    page.click(f'.hand-tile[data-tile="{key(p["tile"])}"]')
    (frame,) = sent(page)
    assert frame["tile"] == p["tile"] and pos_key(frame["at"]) == pos_key(p["at"][0])


def test_an_unlit_dot_and_a_dimmed_tile_do_nothing(open_page: Any, mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    page = open_page(v)
    dims = page.query_selector_all(".hand-tile.is-dim")
    for d in dims:
        d.click(force=True)
    page.click(".pos", force=True)
    assert sent(page) == []
    if dims:
        assert (
            float(page.eval_on_selector(".hand-tile.is-dim", "e => getComputedStyle(e).opacity"))
            < 0.5
        )


def test_the_opening_tile_is_sent_without_a_position(open_page: Any) -> None:
    s, now = first_state(
        lambda s: s.phase == "play" and not s.layout.placed and s.forced_tile is None
    )
    v = seat_view(s, s.to_act, now)
    page = open_page(v)
    t = v["hand"][0]
    page.click(f'.hand-tile[data-tile="{key(t)}"]')
    assert sent(page) == [{"op": "place", "tile": t, "at": None, "version": 7}]


def auction_for_jockey() -> dict[str, Any]:
    s = engine.new_match(engine.Deal.shuffled(random.Random(5)), now_ms=T0, jockey=0)
    s, _ = engine.apply(s, engine.Action("bid", 1, amount=20), T0 + 2000)
    return seat_view(s, 0, T0 + 3000)


def test_the_bid_steps_by_five_and_the_jockey_sees_what_it_would_pay(open_page: Any) -> None:
    page = open_page(auction_for_jockey())
    assert page.input_value("[data-bid-amount]") == "25"
    assert page.text_content("[data-bid-cost]") == "10"
    page.click('[data-step="5"]')
    page.click('[data-step="5"]')
    assert page.input_value("[data-bid-amount]") == "35"
    assert page.text_content("[data-bid-cost]") == "20"
    page.fill("[data-bid-amount]", "60")
    assert page.text_content("[data-bid-cost]") == "45"
    page.click('[data-op="bid"]')
    assert sent(page) == [{"op": "bid", "amount": 60, "version": 7}]


def test_the_jockey_badge_on_the_player_bar_explains_the_word_in_one_tap(open_page: Any) -> None:
    page = open_page(auction_for_jockey(), lang="ja")
    badge = page.locator("[data-testid=jockey-0]")
    assert "ジョッキー" in badge.inner_text()
    assert page.locator("[data-testid=jockey-1]").count() == 0  # only the jockey wears it
    box = badge.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44, box
    sheet = page.locator("[data-testid=rules-sheet]")
    assert not sheet.is_visible()
    badge.click()
    assert sheet.is_visible()
    assert "is-pointed" in (sheet.locator("#term-jockey").get_attribute("class") or "")
    assert sent(page) == []  # a word explained, nothing sent to the server


def test_accept_and_decline_send_their_ops(open_page: Any) -> None:
    page = open_page(auction_for_jockey())
    page.click('[data-op="accept"]')
    assert sent(page) == [{"op": "accept", "version": 7}]
    s = engine.new_match(engine.Deal.shuffled(random.Random(5)), now_ms=T0, jockey=0)
    page = open_page(seat_view(s, 1, T0 + 1000))
    page.click('[data-op="decline"]')
    assert sent(page) == [{"op": "decline", "version": 7}]


def test_resign_asks_before_it_sends(open_page: Any, mid: Any) -> None:
    s, now = mid
    page = open_page(seat_view(s, 0, now))
    page.click('[data-testid="resign"]')
    assert page.is_visible('[data-testid="resign-dialog"]')
    assert sent(page) == []
    page.click('[data-testid="resign-cancel"]')
    assert not page.is_visible('[data-testid="resign-dialog"]')
    assert sent(page) == []
    page.click('[data-testid="resign"]')
    page.click('[data-testid="resign-confirm"]')
    assert sent(page) == [{"op": "resign", "version": 7}]


def test_start_continue_and_reveal_buttons(open_page: Any) -> None:
    page = open_page(waiting_view(0))
    page.click('[data-op="start"]')
    assert sent(page) == [{"op": "start", "version": 7}]
    s, now = first_state(lambda s: s.awaiting_reveal and len(s.layout.placed) > 1, handoff=True)
    page = open_page(seat_view(s, None, now, kind="same_device"))
    page.click('[data-op="reveal"]')
    assert sent(page) == [{"op": "reveal", "version": 7}]
    s, now = first_state(lambda s: s.phase == "hand_over")
    page = open_page(seat_view(s, 0, now, deadline=now + 30_000))
    page.click('[data-op="continue"]')
    assert sent(page) == [{"op": "continue", "version": 7}]


def running_clock_view(main_left: int, delay_left: int) -> dict[str, Any]:
    """A view of seat 0's running decision with ``main_left`` ms of main time and delay left."""
    s, now = first_state(lambda s: s.phase == "play" and s.to_act == 0 and s.layout.placed)
    assert s.clock is not None and s.decision_start is not None and s.main is not None
    start, delay, main = s.decision_start, s.clock.delay_ms, s.main[0]
    at = start + delay - delay_left if delay_left else start + delay + main - main_left
    return seat_view(s, 0, at)


def test_the_running_clock_counts_down_and_flags_once_at_zero(open_page: Any) -> None:
    page = open_page(running_clock_view(main_left=700, delay_left=0))
    page.wait_for_function("window.sent.length > 0", timeout=3000)
    page.wait_for_timeout(500)
    assert sent(page) == [{"op": "flag", "version": 7}]
    assert page.text_content('[data-testid="clock-0"] [data-clock-main]') == "0:00.0"


def test_the_delay_runs_first_and_main_time_waits(open_page: Any) -> None:
    v = running_clock_view(main_left=0, delay_left=3000)
    main = clock_ms(v["clocks"]["main"][0])
    page = open_page(v)
    clock = '[data-testid="clock-0"]'
    assert page.text_content(f"{clock} [data-clock-delay-value]") in ("3", "2")
    assert page.text_content(f"{clock} [data-clock-main]") == main
    page.wait_for_function(
        f"document.querySelector('{clock} [data-clock-delay-value]').textContent === '1'"
    )
    assert page.text_content(f"{clock} [data-clock-main]") == main  # still in the delay
    page.wait_for_function(f"document.querySelector('{clock} [data-clock-delay]').hidden")
    page.wait_for_function(
        f"document.querySelector('{clock} [data-clock-main]').textContent !== '{main}'"
    )
    # The other clock stands still, and nothing was flagged.
    other = clock_ms(v["clocks"]["main"][1])
    assert page.text_content('[data-testid="clock-1"] [data-clock-main]') == other
    assert sent(page) == []


def test_a_swapped_fragment_brings_the_new_version(open_page: Any, mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    page = open_page(v)
    p = next(p for p in v["playable"] if len(p["at"]) == 1)
    page.click(f'.hand-tile[data-tile="{key(p["tile"])}"]')
    # Until a new version arrives a second action is held back.
    page.click(f'.hand-tile[data-tile="{key(p["tile"])}"]', force=True)
    assert len(sent(page)) == 1
    swap_in(page, seat_view(s, 0, now, version=8))
    page.click(f'.hand-tile[data-tile="{key(p["tile"])}"]')
    assert [f["version"] for f in sent(page)] == [7, 8]


def test_a_push_that_only_gave_time_back_keeps_the_move_in_flight(open_page: Any, mid: Any) -> None:
    # After a restart our outage is given back as a new version while a move may be on
    # its way. The page used to take that version for the answer and offer its tiles
    # again: a second tap was refused as stale once the first move landed.
    s, now = mid
    v = seat_view(s, 0, now)
    page = open_page(v)
    shown: dict[str, str] = {}
    with translation.override("en"):
        render.render_changed(v, shown)  # what the socket sent: the page as drawn
    p = next(p for p in v["playable"] if len(p["at"]) == 1)
    tile = f'.hand-tile[data-tile="{key(p["tile"])}"]'
    page.click(tile)
    credited, ms = engine.credit(s, s.decision_start, s.decision_start + 3_000)
    assert ms == 3_000
    cv = seat_view(credited, 0, now, version=8)
    cv["match"]["credit"] = {"ms": ms, "seat": 0, "to": now}
    pushed = swap_in(page, cv, sent=shown)
    assert set(re.findall(r'id="(sb-[a-z]+)"', pushed)) <= render.TIMED  # clocks and status only
    assert page.get_attribute(".sb-status", "data-version") == "8"
    assert "given back" in page.inner_text("#sb-status")  # the page says why the clock moved
    assert page.evaluate("document.documentElement.classList.contains('sb-pending')")
    page.click(tile, force=True)
    assert len(sent(page)) == 1  # no second move behind the first
    # The move lands (applied at version 9): the page is free again.
    action = next(
        a for a in engine.legal_actions(credited) if a.kind == "place" and list(a.tile) == p["tile"]
    )
    after, _ = engine.apply(credited, action, now_ms=now + 100)
    swap_in(page, seat_view(after, 0, now + 100, version=9), sent=shown)
    assert not page.evaluate("document.documentElement.classList.contains('sb-pending')")


def test_the_start_countdown_runs(open_page: Any) -> None:
    v = waiting_view(0)
    v["match"]["ready_deadline"] = 4_000_000_000_000  # far away: it only has to tick
    page = open_page(v)
    first = page.text_content('[data-testid="start-countdown"]')
    page.wait_for_timeout(1300)
    assert int(page.text_content('[data-testid="start-countdown"]')) < int(first)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_phone_width_has_no_sideways_scrolling(open_page: Any, mid: Any, lang: str) -> None:
    s, now = mid
    views = [seat_view(s, 0, now), auction_for_jockey()]
    s2, now2 = first_state(lambda s: s.phase == "hand_over" and s.hand_end == "block")
    views.append(seat_view(s2, 0, now2, deadline=now2 + 30_000))
    for v in views:
        page = open_page(v, width=360, lang=lang)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360
        box = page.query_selector(".sb-board").bounding_box()
        # In the auction a phone shows no empty table (the auction panel takes its room).
        assert box is None or (box["x"] >= 0 and box["x"] + box["width"] <= 360)


# --- after the match: rematch ------------------------------------------------------------


@pytest.fixture(scope="module")
def resigned() -> tuple[engine.MatchState, int]:
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    s, _ = engine.apply(s, engine.Action("resign", 1), now + 1000)
    return s, now + 1000


def test_the_rematch_buttons_send_their_ops(open_page: Any, resigned: Any) -> None:
    s, now = resigned
    page = open_page(seat_view(s, 0, now, rematch=rematch_block()))
    page.click('[data-testid="op-rematch"]')
    assert sent(page) == [{"op": "rematch", "version": 7}]
    offered = rematch_block("open", 0, expires_at=now + 120_000)
    for testid, op in (
        ("op-rematch-accept", "rematch_accept"),
        ("op-rematch-decline", "rematch_decline"),
    ):
        page = open_page(seat_view(s, 1, now, rematch=offered))
        page.click(f'[data-testid="{testid}"]')
        assert sent(page) == [{"op": op, "version": 7}]


def test_an_accepted_rematch_takes_the_page_to_the_new_match_once(
    browser: Any, resigned: Any
) -> None:
    """Served from a routed origin (a file page cannot open /matches/99/): the real paths."""
    s, now = resigned
    v = seat_view(s, 0, now, rematch=rematch_block("open", 0, expires_at=now + 99_000))
    with translation.override("en"):
        html = render_to_string("matches/match.html", render.page_context(v))
    html = re.sub(r'<script src="/static/django_htmx[^"]*"[^>]*></script>', "", html)
    requests: list[str] = []

    def serve(route: Any) -> None:
        path = route.request.url.removeprefix("http://sb.test")
        requests.append(path)
        # Pages name hashed static files; the working tree has them under plain names.
        path = re.sub(r"^(/static/.+)\.[0-9a-f]{12}(\.\w+)$", r"\1\2", path)
        if path == "/matches/12/":
            route.fulfill(body=html, content_type="text/html; charset=utf-8")
        elif path.startswith("/static/") and (ROOT / path.lstrip("/")).is_file():
            route.fulfill(path=str(ROOT / path.lstrip("/")))
        elif path == "/matches/99/":
            route.fulfill(body="<p id=new>the rematch</p>", content_type="text/html")
        else:
            route.fulfill(status=404, body="")

    page = browser.new_page()
    try:
        page.route("http://sb.test/**", serve)
        page.goto("http://sb.test/matches/12/")
        page.evaluate(FAKE_SOCKET)
        # The view the socket sends on connecting changes nothing.
        swap_in(page, v)
        page.wait_for_timeout(200)
        assert page.url == "http://sb.test/matches/12/"
        accepted = seat_view(
            s, 0, now, version=8, rematch=rematch_block("accepted", 0, new_match=99)
        )
        swap_in(page, accepted)
        page.wait_for_url("http://sb.test/matches/99/")
        page.wait_for_selector("#new")
        assert requests.count("/matches/99/") == 1
    finally:
        page.close()


def test_an_old_match_page_with_an_accepted_rematch_stays_put(
    open_page: Any, resigned: Any
) -> None:
    s, now = resigned
    v = seat_view(s, 1, now, rematch=rematch_block("accepted", 0, new_match=99))
    page = open_page(v)
    start = page.url
    swap_in(page, v)  # the view the socket sends on connecting
    page.wait_for_timeout(400)
    assert page.url == start
    assert page.get_attribute('[data-testid="rematch-link"]', "href") == "/matches/99/"


def test_a_lapsing_offer_asks_for_the_view_once(open_page: Any, resigned: Any) -> None:
    s, now = resigned
    v = seat_view(s, 0, now, rematch=rematch_block("open", 0, expires_at=now + 300))
    v["match"]["server_now"] = now
    if v.get("clocks"):
        v["clocks"]["server_now"] = now
    page = open_page(v)
    page.wait_for_function("window.sent.length > 0", timeout=4000)
    page.wait_for_timeout(600)
    assert sent(page) == [{"op": "sync"}]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_result_panel_fits_a_phone(open_page: Any, resigned: Any, lang: str) -> None:
    s, now = resigned
    offered = rematch_block("open", 0, expires_at=now + 120_000)
    for v in (
        seat_view(s, 1, now, kind="ranked", rematch=offered),
        seat_view(s, 0, now, kind="ranked", rematch=offered),
        seat_view(s, 0, now, rematch=rematch_block("accepted", 0, new_match=99)),
    ):
        page = open_page(v, width=360, lang=lang)
        assert page.is_visible('[data-testid="rematch-status"]')
        assert page.is_visible('[data-testid="replay-link"]')
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
