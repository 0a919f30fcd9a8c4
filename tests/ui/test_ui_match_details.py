"""The match screen's details from issue 9, rendered from engine views (no browser).

A turn's draws make one line of the record; the table says who scored; a spectator
and a same-device start screen are told what is true for them.
"""

from __future__ import annotations

import html as html_text
import re
from typing import Any

from test_ui_render import element, frag
from ui_scenarios import first_state, random_match, seat_view, waiting_view

import engine
from matches.ui.context import build

NAMES = ("alice", "bob")


def _log_lines(view: dict[str, Any], lang: str = "en") -> list[tuple[str, str]]:
    log = element(frag(view, lang), "sb-log")
    return [
        (kind, html_text.unescape(text))
        for kind, text in re.findall(r'data-type="(\w+)"[^>]*>([^<]*)</li>', log)
    ]


def _after_draws(n: int) -> tuple[engine.MatchState, int, list[dict[str, Any]]]:
    """A state just after a turn in which one player drew ``n`` or more tiles, and the draws."""
    for seed in range(200):
        for s, now in random_match(seed):
            if not s.log or s.log[-1]["type"] != "place":
                continue
            run = []
            for ev in reversed(s.log[:-1]):
                if ev["type"] != "draw" or ev["player"] != s.log[-1]["player"]:
                    break
                run.append(ev)
            if len(run) >= n:
                return s, now, run[::-1]
    raise AssertionError("no seeded turn draws that many")


def test_a_turns_draws_are_one_line_with_the_tiles_for_the_drawer_only() -> None:
    s, now, draws = _after_draws(2)
    drawer = draws[0]["player"]
    tiles = ", ".join(f"[{e['tile'][0]}|{e['tile'][1]}]" for e in draws)
    mine = _log_lines(seat_view(s, drawer, now))
    theirs = _log_lines(seat_view(s, 1 - drawer, now))
    watching = _log_lines(seat_view(s, None, now))
    assert ("draw", f"{NAMES[drawer]} drew {tiles}") in mine
    for lines in (theirs, watching):
        assert ("draw", f"{NAMES[drawer]} drew {len(draws)} tiles") in lines
        assert tiles.split(", ")[0] not in "".join(text for _, text in lines)
    for lines in (mine, theirs, watching):
        kinds = [k for k, _ in lines]
        # The newest line first: the placement, then the draws that led to it, as one line.
        assert kinds[:2] == ["place", "draw"]
        assert not any(a == b == "draw" for a, b in zip(kinds, kinds[1:], strict=False))
    ja = _log_lines(seat_view(s, 1 - drawer, now), "ja")
    assert ("draw", f"{NAMES[drawer]}が{len(draws)}枚引きました") in ja  # no space before が


def test_the_table_says_who_scored_with_the_last_tile() -> None:
    s, now = first_state(
        lambda s: bool(s.log) and s.log[-1]["type"] == "place" and s.log[-1]["score"] > 0
    )
    ev = s.log[-1]
    for seat in (0, 1, None):
        board = element(frag(seat_view(s, seat, now)), "sb-board")
        scored = re.search(r'data-testid="scored">([^<]*)<', board)
        assert scored and scored[1] == f"{NAMES[ev['player']]} scores {ev['score']}"
    ja = element(frag(seat_view(s, 0, now), "ja"), "sb-board")
    assert f"{NAMES[ev['player']]}が{ev['score']}点獲得" in ja
    # A placement that scores nothing says nothing of the kind.
    s, now = first_state(
        lambda s: bool(s.log) and s.log[-1]["type"] == "place" and s.log[-1]["score"] == 0
    )
    assert 'data-testid="scored"' not in element(frag(seat_view(s, 0, now)), "sb-board")


def test_a_spectator_gets_no_button_anywhere() -> None:
    s, now = first_state(lambda s: s.phase == "hand_over")
    hand_over = seat_view(s, None, now, deadline=now + 30_000)
    hand_over["match"]["watching"] = True
    html = frag(hand_over)
    assert 'data-testid="continue"' in html and 'data-op="' not in html
    waiting = waiting_view(None)
    waiting["match"]["watching"] = True
    html = frag(waiting)
    assert 'data-testid="start-screen"' in html
    assert 'data-op="' not in html and "data-notify-toggle" not in html
    assert "Waiting for both players to press Start" in html
    # A same-device match watched: the hand-off screen is the device's, not hers.
    s, now = first_state(lambda s: s.awaiting_reveal and len(s.layout.placed) > 1, handoff=True)
    handoff = seat_view(s, None, now, kind="same_device")
    handoff["match"]["watching"] = True
    html = frag(handoff)
    assert 'data-testid="handoff"' not in html and 'data-op="' not in html


def test_the_same_device_start_screen_lists_nobody_as_not_ready() -> None:
    v = waiting_view(0)
    v["match"]["kind"] = "same_device"
    overlay = element(frag(v, "ja"), "sb-overlay")
    assert "開始を1回押すと両者の対局が始まります" in overlay
    assert "まだ" not in overlay and 'data-testid="ready-' not in overlay
    assert 'data-op="start"' in overlay


def test_a_hand_off_asks_the_next_player_to_show_their_hand() -> None:
    s, now = first_state(lambda s: s.awaiting_reveal and len(s.layout.placed) > 1, handoff=True)
    normal = element(frag(seat_view(s, None, now, kind="same_device")), "sb-overlay")
    assert 'data-op="reveal"' in normal


def test_ratings_stand_by_the_names_and_the_kind_is_said() -> None:
    s, now = first_state(lambda s: s.phase == "play" and s.layout.placed)
    v = seat_view(s, 0, now, kind="ranked")
    v["match"]["ratings"] = [
        {"value": 1520, "display": "1520?"},
        {"value": 1480, "display": "1480"},
    ]
    html = frag(v, "ja")
    assert 'data-testid="rating-0" title="レーティング">1520（暫定）<' in element(html, "sb-me")
    assert 'data-testid="rating-1" title="レーティング">1480<' in element(html, "sb-opponent")
    assert 'data-kind="ranked">レーティング戦<' in element(html, "sb-status")
    # A same-device guest has no rating: nothing is shown for it.
    v["match"].update(kind="same_device", ratings=[{"value": 1500, "display": "1500?"}, None])
    html = frag(v, "ja")
    assert 'data-testid="rating-1"' not in html and 'data-kind="same_device">同じ端末<' in html


def test_the_result_names_the_end_once_and_shows_no_change_for_a_casual_match() -> None:
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    s, _ = engine.apply(s, engine.Action("resign", 1), now + 1000)
    v = seat_view(s, 0, now + 1000)
    result = html_text.unescape(element(frag(v, "ja"), "sb-settlement"))
    assert result.count("投了") == 1
    assert 'data-testid="rating-changes"' not in result
    assert build(v)["result"]["ratings"] == []


def test_after_an_outage_the_page_says_the_time_was_given_back_in_japanese() -> None:
    s, now = first_state(lambda s: s.phase == "play" and s.layout.placed)
    v = seat_view(s, 0, now)
    v["match"]["credit"] = {"ms": 13_100, "seat": 1, "to": now - 5_000}
    status = element(frag(v, "ja"), "sb-status")
    assert (
        "サーバーに13秒間接続できなかったため" in status and "bobの持ち時間に戻しました" in status
    )
    v["match"]["credit"]["to"] = now - 120_000  # long ago: no longer news
    assert 'data-testid="outage"' not in element(frag(v, "ja"), "sb-status")


def test_a_label_is_followed_by_the_languages_own_colon() -> None:
    """Japanese puts the full-width ： after a label, with no space; English ": "."""
    s, now = next((s, t) for s, t in random_match(3) if s.layout.placed and s.phase == "play")
    view = seat_view(s, 0, now)
    ja = element(frag(view, "ja"), "sb-board")
    en = element(frag(view, "en"), "sb-board")
    assert "得点になる端の合計：<span" in ja and "合計:" not in ja
    assert "Ends that score, added: <span" in en
