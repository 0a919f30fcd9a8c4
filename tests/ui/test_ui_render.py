"""The match page's HTML (matches/ui/, templates/matches/) for views from the engine."""

from __future__ import annotations

import html as html_text
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.template.loader import render_to_string
from django.utils import translation
from ui_scenarios import T0, first_state, seat_view, waiting_view

import engine
from matches.ui import fragments as render
from matches.ui.text import side_label


def frag(view: dict[str, Any], lang: str = "en") -> str:
    with translation.override(lang):
        return render.render_changed(view, {})


def page(view: dict[str, Any], lang: str = "en") -> str:
    with translation.override(lang):
        return render_to_string("matches/match.html", render.page_context(view))


class TopLevel(HTMLParser):
    """The top-level elements of a fragment string: (tag, attrs)."""

    VOID = {"input", "br", "img", "meta", "link", "hr", "circle", "rect", "line", "path"}

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.top: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.top.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.top.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID:
            self.depth -= 1


def top_level(html: str) -> list[tuple[str, dict[str, str | None]]]:
    p = TopLevel()
    p.feed(html)
    p.close()
    assert p.depth == 0, "unbalanced tags"
    return p.top


def attr_values(html: str, name: str) -> list[str]:
    return re.findall(rf'{name}="([^"]*)"', html)


def element(html: str, elem_id: str) -> str:
    """The outer HTML of the element with ``id``."""
    m = re.search(rf'<(\w+) id="{elem_id}"', html)
    assert m, elem_id
    tag = m.group(1)
    depth = 0
    for t in re.finditer(rf"<(/?){tag}[\s>]", html[m.start() :]):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            end = m.start() + t.end()
            return html[m.start() : html.index(">", end - 1) + 1]
    raise AssertionError(f"unclosed {elem_id}")


# --- views -----------------------------------------------------------------------


def my_turn_with_choices(s: engine.MatchState) -> bool:
    if s.phase != "play" or s.to_act != 0 or s.layout.spinner is None or s.must_place:
        return False
    v = engine.view_for(s, 0, 0)
    return len(s.layout.placed) >= 6 and any(len(p["at"]) >= 2 for p in v["playable"])


@pytest.fixture(scope="module")
def mid() -> tuple[engine.MatchState, int]:
    return first_state(my_turn_with_choices)


# --- structure -----------------------------------------------------------------------


def test_fragments_are_top_level_elements_with_id_and_oob(mid: Any) -> None:
    s, now = mid
    html = frag(seat_view(s, 0, now))
    tops = top_level(html)
    assert [a["id"] for _, a in tops] == [i for i, _ in render.FRAGMENTS]
    assert all(a.get("hx-swap-oob") == "true" for _, a in tops)


def test_the_page_connects_the_socket_and_holds_every_fragment(mid: Any) -> None:
    s, now = mid
    html = page(seat_view(s, 0, now))
    assert 'hx-ext="ws"' in html
    assert 'ws-connect="/ws/matches/12/?format=html&amp;seen=7"' in html
    for elem_id, _ in render.FRAGMENTS:
        assert f'id="{elem_id}"' in html
    assert "hx-swap-oob" not in html
    assert "js/match." in html and "css/match." in html  # hashed names
    assert 'id="sb-resign-dialog"' in html and 'data-op="resign"' in html


def test_the_version_is_in_the_status_fragment(mid: Any) -> None:
    s, now = mid
    html = frag(seat_view(s, 0, now, version=41))
    assert 'data-version="41"' in element(html, "sb-status")


def test_render_error_is_an_oob_toast() -> None:
    html = render.render_error("not_your_turn", "It is not your turn <now>")
    ((tag, attrs),) = top_level(html)
    assert attrs["id"] == "sb-toast" and attrs["hx-swap-oob"] == "true"
    assert attrs["data-code"] == "not_your_turn"
    assert "&lt;now&gt;" in html


# --- board and hand -------------------------------------------------------------------


def test_every_legal_position_has_a_dot_and_counted_ends_show_values(mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    board = element(frag(v), "sb-board")
    keys = attr_values(board, "data-pos")
    assert sorted(keys) == sorted(f"{p['tile'][0]}-{p['tile'][1]}:{p['side']}" for p in v["legal"])
    counts = [int(c) for c in attr_values(board, "data-count")]
    assert sorted(counts) == sorted(e["value"] for e in v["ends"])
    assert f'data-total="{v["end_total"]}"' in board
    assert sorted(attr_values(board, "data-tile")) == sorted(
        f"{e['tile'][0]}-{e['tile'][1]}" for e in v["layout"]
    )
    assert 'data-spinner="1"' in board


def test_hand_tiles_carry_their_positions_and_unplayable_ones_are_dimmed(mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    hand = element(frag(v), "sb-hand")
    buttons = re.findall(r"<button[^>]*hand-tile[^>]*>", hand)
    assert len(buttons) == len(v["hand"])
    playable = {f"{p['tile'][0]}-{p['tile'][1]}": p for p in v["playable"]}
    for b in buttons:
        key = re.search(r'data-tile="([^"]+)"', b).group(1)
        if key in playable:
            at = re.search(r'data-at="([^"]+)"', b).group(1).split()
            want = [f"{a['tile'][0]}-{a['tile'][1]}:{a['side']}" for a in playable[key]["at"]]
            assert at == want
            assert "disabled" not in b
        else:
            assert "is-dim" in b and "disabled" in b


def test_when_a_drawn_tile_must_be_placed_only_it_is_playable() -> None:
    s, now = first_state(lambda s: s.must_place is not None and s.to_act == 0)
    v = seat_view(s, 0, now)
    hand = element(frag(v), "sb-hand")
    must = f"{s.must_place[0]}-{s.must_place[1]}"
    assert attr_values(hand, "data-at") and len(attr_values(hand, "data-at")) == 1
    assert re.search(rf'data-tile="{must}" data-at=', hand)
    assert 'data-testid="must-place"' in hand


def test_an_opening_tile_is_placed_with_one_tap() -> None:
    s, now = first_state(
        lambda s: s.phase == "play" and not s.layout.placed and s.forced_tile is None
    )
    v = seat_view(s, s.to_act, now)
    hand = element(frag(v), "sb-hand")
    assert set(attr_values(hand, "data-at")) == {"open"}
    assert len(attr_values(hand, "data-at")) == len(v["hand"])


def test_opponent_tile_count_talon_and_balances_in_points_and_chips(mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    html = frag(v)
    opp = element(html, "sb-opponent")
    assert f'data-testid="tiles-1" data-count="{len(s.hands[1])}"' in opp
    assert f'data-testid="talon" data-count="{len(s.talon)}"' in html
    for seat in (0, 1):
        b = s.balances[seat]
        assert f'data-testid="balance-{seat}" data-points="{b}" data-chips="{b // 5}"' in html
        assert f"{b} pts ({b // 5} chips)" in html


def test_clocks_carry_what_the_script_counts_down_from(mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now + 4000)
    html = frag(v)
    c = v["clocks"]
    mine = re.search(r'<div class="sb-clock[^"]*" data-testid="clock-0"[^>]*>', html).group(0)
    assert 'data-running="1"' in mine and "is-running" in mine
    assert f'data-main="{c["main"][0]}"' in mine
    assert f'data-delay-left="{c["delay_left"]}"' in mine
    assert f'data-server-now="{c["server_now"]}"' in mine
    theirs = re.search(r'<div class="sb-clock[^"]*" data-testid="clock-1"[^>]*>', html).group(0)
    assert 'data-running="0"' in theirs
    # The delay is shown apart from the main time.
    assert "data-clock-delay" in html and "Main time" in html and "Delay" in html


# --- auction -----------------------------------------------------------------------------


def test_the_non_jockey_may_decline_or_bid_from_15() -> None:
    s = engine.new_match(engine.Deal.shuffled(__import__("random").Random(5)), now_ms=T0, jockey=0)
    v = seat_view(s, 1, T0 + 1000)
    a = element(frag(v), "sb-auction")
    assert 'data-op="decline"' in a and 'data-op="accept"' not in a
    assert 'min="15" max="150" step="5" value="15"' in a
    assert 'data-op="bid"' in a and 'data-testid="auction-jockey">alice<' in a
    # The page is given each amount's cost (no discount: it pays what it bids).
    assert 'data-costs="15:15 20:20 25:25 ' in a and ' 150:150"' in a


def test_the_jockey_sees_the_accept_cost_and_its_discounted_bid_cost() -> None:
    s = engine.new_match(engine.Deal.shuffled(__import__("random").Random(5)), now_ms=T0, jockey=0)
    s, _ = engine.apply(s, engine.Action("bid", 1, amount=20), T0 + 2000)
    v = seat_view(s, 0, T0 + 3000)
    a = element(frag(v), "sb-auction")
    assert 'data-op="decline"' not in a
    assert 'data-op="accept"' in a and 'data-cost="20"' in a and "bob pays 20" in a
    assert 'min="25" max="165"' in a
    assert 'data-costs="25:10 30:15 ' in a and ' 165:150"' in a  # the engine's discount
    assert "<b data-bid-cost>10</b>" in a  # 25 − 15
    assert 'data-amount="20"' in a  # the standing bid
    # Not your turn: no buttons, but who is deciding.
    theirs = element(frag(seat_view(s, 1, T0 + 3000)), "sb-auction")
    assert "data-op=" not in theirs and "alice is deciding" in theirs


# --- log -------------------------------------------------------------------------------------


def test_the_log_shows_each_score_with_its_counted_ends() -> None:
    s, now = first_state(lambda s: any(e["type"] == "place" and e["score"] for e in s.log))
    ev = next(e for e in reversed(s.log) if e["type"] == "place" and e["score"])
    log = element(frag(seat_view(s, 0, now)), "sb-log")
    name = ("alice", "bob")[ev["player"]]
    tile = f"[{ev['tile'][0]}|{ev['tile'][1]}]"
    ends = "+".join(str(e["value"]) for e in ev["ends"])
    line = f"{name}: {tile} → ends {ends} = {ev['total']}, {ev['score']} points"
    assert line in log.replace("&gt;", ">")


def test_a_draw_shows_its_tile_only_to_the_drawer() -> None:
    s, now = first_state(lambda s: bool(s.log) and s.log[-1]["type"] == "draw")
    ev = s.log[-1]
    drawer = ev["player"]
    tile = f"[{ev['tile'][0]}|{ev['tile'][1]}]"
    mine = element(frag(seat_view(s, drawer, now)), "sb-log")
    theirs = element(frag(seat_view(s, 1 - drawer, now)), "sb-log")
    assert tile in mine
    assert tile not in theirs and "drew a tile" in theirs


# --- settlement, result, start, hand-off -----------------------------------------------


def test_a_block_settlement_shows_both_hands_and_the_arithmetic() -> None:
    s, now = first_state(
        lambda s: (
            s.phase == "hand_over"
            and s.hand_end == "block"
            and s.settlement["receiver"] is not None
        )
    )
    st = s.settlement
    v = seat_view(s, 0, now, ready=(False, True), deadline=now + 30_000)
    html = element(frag(v), "sb-settlement")
    assert "hidden" not in html.split(">", 1)[0]
    for seat in (0, 1):
        assert f'data-pips="{st["pips"][seat]}"' in html
        for t in st["hands"][seat]:
            assert f'data-tile="{t[0]}-{t[1]}"' in html
    payer = 1 - st["receiver"]
    assert f"rounds to {st['owed']}" in html
    assert f"{('alice', 'bob')[payer]}&#39;s {st['pips'][payer]}" in html
    assert 'data-op="continue"' in html and 'data-testid="continue-countdown"' in html
    assert re.search(r'data-ready="1"><span[^>]*>✓</span>bob', html)


def test_a_domino_settlement_names_who_went_out_and_the_next_jockey() -> None:
    s, now = first_state(lambda s: s.phase == "hand_over" and s.hand_end == "domino")
    w = s.settlement["went_out"]
    html = element(frag(seat_view(s, 0, now)), "sb-settlement")
    name = ("alice", "bob")[w]
    assert f"{name} went out" in html and f"{name} is the jockey next hand" in html


@pytest.mark.parametrize(
    ("end", "headline", "reason"),
    [
        ("balance", "You win", "bob&#39;s balance reached 0"),
        ("time", "You win", "bob ran out of time"),
        ("resign", "You win", "bob resigned"),
    ],
)
def test_the_result_says_who_won_and_how(end: str, headline: str, reason: str) -> None:
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    v = seat_view(s, 0, now, status="finished", result={"winner": 0, "end": end})
    html = element(frag(v), "sb-settlement")
    assert f'data-testid="result" data-winner="0" data-end="{end}"' in html
    assert headline in html and reason in html


def test_an_aborted_match_has_no_winner() -> None:
    v = waiting_view()
    v["match"].update(status="aborted", result={"winner": None, "end": "abort"})
    html = element(frag(v), "sb-settlement")
    assert 'data-winner="" data-end="abort"' in html and "Match cancelled" in html


def test_the_start_screen_shows_who_is_ready_and_the_countdown() -> None:
    v = waiting_view(0, ready=(False, True))
    html = frag(v)
    ov = element(html, "sb-overlay")
    assert 'data-op="start"' in ov
    assert 'data-testid="ready-1" data-ready="1"' in ov
    assert 'data-testid="ready-0" data-ready="0"' in ov
    assert f'data-deadline="{T0 + 60_000}"' in ov and ">60</b>" in ov
    # Pressed already: no button for this seat.
    v = waiting_view(1, ready=(False, True))
    assert 'data-op="start"' not in element(frag(v), "sb-overlay")


def test_the_same_device_hand_off_hides_every_hand() -> None:
    s, now = first_state(lambda s: s.awaiting_reveal and len(s.layout.placed) > 2, handoff=True)
    v = seat_view(s, None, now, kind="same_device")
    assert "hand" not in v
    html = frag(v)
    ov = element(html, "sb-overlay")
    name = ("alice", "bob")[s.to_act]
    assert f"It is {name}'s turn. Hand the device over." in html_text.unescape(ov)
    assert 'data-op="reveal"' in ov
    assert "hand-tile" not in html
    ja = element(frag(v, "ja"), "sb-overlay")
    assert 'data-op="reveal"' in ja


def test_resign_is_offered_while_the_match_runs(mid: Any) -> None:
    s, now = mid
    assert 'data-op="resign"' in element(frag(seat_view(s, 0, now)), "sb-me")
    over = seat_view(s, 0, now, status="finished", result={"winner": 1, "end": "resign"})
    assert 'data-op="resign"' not in element(frag(over), "sb-me")


# --- language ----------------------------------------------------------------------------------


def test_the_rules_help_follows_the_language(mid: Any) -> None:
    s, now = mid
    v = seat_view(s, 0, now)
    ja = page(v, "ja")
    en = page(v, "en")
    # A sheet over the table, saying that the clock keeps running.
    assert '<dialog id="sb-rules"' in ja and "data-open-rules" in ja
    assert "時計は止まりません" in ja and "The clock keeps running" in en
    assert "スペクタキュラー・ビッド（Spectacular Bid）" in ja and "分岐ダブル" in ja
    assert "Only the first double is the spinner" in en and "分岐ダブル" not in en
    for html in (ja, en):
        # The figures and worked examples are on the rules page, which the help links to.
        assert 'href="/rules/"' in html


def test_each_render_speaks_its_own_language_and_leaves_none_behind(mid: Any) -> None:
    """Renders for a Japanese seat and an English one, one after the other in one
    thread (as the socket renders each audience), each in its language; text drawn
    afterwards outside a render (the replay's log lines) follows the active language."""
    s, now = mid
    v = seat_view(s, 0, now)
    for _round in range(2):
        ja, en = frag(v, "ja"), frag(v, "en")
        assert "投了" in ja and "Resign" not in ja
        assert "Resign" in en and "投了" not in en
    with translation.override("ja"):
        assert side_label("low") != "low end"
    with translation.override("en"):
        assert side_label("low") == "low end"


def test_japanese_strings_from_the_translations_file(
    mid: Any, settings: Any, tmp_path: Any
) -> None:
    """TRANSLATIONS_ja.txt compiled into a catalog gives the glossary's words."""
    from ui_mo import write_mo

    write_mo(tmp_path / "ja" / "LC_MESSAGES" / "django.mo")
    settings.LOCALE_PATHS = [tmp_path, *settings.LOCALE_PATHS]
    s, now = mid
    html = frag(seat_view(s, 0, now), "ja")
    b = s.balances[0]
    assert f"{b}点（{b // 5}チップ）" in html
    for word in ("持ち時間", "猶予", "タロン", "手牌", "端の合計", "記録", "投了"):
        assert word in html, word
