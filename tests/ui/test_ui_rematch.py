"""After the match: rematch, replay and history links, voided matches (matches/_settlement.html).

The views are real engine views of a match that ended by resignation, with the
``match`` block that matches/play/ adds; its ``rematch`` entry is shaped as
matches/lobby/rematch.py's ``rematch_block`` builds it. Japanese comes from the
committed catalogue (locale/ja), so these tests also check that it is compiled.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils import translation
from test_ui_render import element, frag, page, top_level
from ui_scenarios import T0, first_state, rematch_block, seat_view, waiting_view

import engine
from matches.clock.voiding import VOID_OUTAGE, VOID_STAFF
from matches.ui.context import build

OPS = ("op-rematch", "op-rematch-accept", "op-rematch-decline")


@pytest.fixture(scope="module")
def resigned() -> tuple[engine.MatchState, int]:
    """A real match that bob (seat 1) resigned in the middle of a hand."""
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    now += 1500
    s, _ = engine.apply(s, engine.Action("resign", 1), now)
    assert s.phase == engine.MATCH_OVER and s.winner == 0 and s.end == "resign"
    return s, now


def over(
    resigned: Any, seat: int | None, rematch: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    s, now = resigned
    kw.setdefault("rematch", rematch_block() if rematch is None else rematch)
    return seat_view(s, seat, now, **kw)


def result_panel(view: dict[str, Any], lang: str = "en") -> str:
    return element(frag(view, lang), "sb-settlement")


def ops_in(html: str) -> set[str]:
    return {t for t in OPS if f'data-testid="{t}"' in html}


def rematch_status(html: str) -> str:
    m = re.search(r'data-testid="rematch-status" data-status="([^"]*)"', html)
    assert m, "no rematch-status"
    return m.group(1)


def goto(html: str) -> str | None:
    m = re.search(r'data-testid="result"[^>]*data-goto="([^"]*)"', html)
    return m.group(1) if m else None


# --- each rematch state, for the offerer and the other seat ------------------------------


def test_no_offer_yet_both_players_may_offer(resigned: Any) -> None:
    for seat in (0, 1):
        html = result_panel(over(resigned, seat))
        assert rematch_status(html) == "none"
        assert ops_in(html) == {"op-rematch"}
        assert 'data-op="rematch"' in html and ">Rematch</button>" in html
        assert goto(html) is None


@pytest.mark.parametrize("offerer", [0, 1])
def test_an_open_offer_waits_for_the_offerer_and_asks_the_other_seat(
    resigned: Any, offerer: int
) -> None:
    rb = rematch_block("open", offerer)
    mine = result_panel(over(resigned, offerer, rb))
    assert rematch_status(mine) == "open" and 'data-mine="1"' in mine
    assert ops_in(mine) == set()
    assert "You offered a rematch. Waiting for your opponent…" in mine
    theirs = result_panel(over(resigned, 1 - offerer, rb))
    assert rematch_status(theirs) == "open" and 'data-mine="0"' in theirs
    assert ops_in(theirs) == {"op-rematch-accept", "op-rematch-decline"}
    assert 'data-op="rematch_accept"' in theirs and 'data-op="rematch_decline"' in theirs
    assert "Your opponent offers a rematch." in theirs
    # Both see how long the offer stands; the page asks for a fresh view when it lapses.
    for html in (mine, theirs):
        cd = re.search(r'<b class="countdown"[^>]*data-testid="rematch-countdown"[^>]*>', html)
        assert cd and f'data-deadline="{T0 + 120_000}"' in cd.group(0)
        assert "data-sync-at-zero" in cd.group(0)
        assert goto(html) is None


def test_a_declined_offer_is_shown_to_the_offerer_and_cannot_be_renewed(resigned: Any) -> None:
    rb = rematch_block("declined", 0)
    mine = result_panel(over(resigned, 0, rb))
    assert rematch_status(mine) == "declined"
    assert "Your opponent declined the rematch." in mine
    theirs = result_panel(over(resigned, 1, rb))
    assert "You declined the rematch." in theirs
    assert "Your opponent declined" not in theirs
    for html in (mine, theirs):
        assert ops_in(html) == set() and goto(html) is None


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ("expired", "The rematch offer has lapsed."),
        ("withdrawn", "The rematch offer was withdrawn."),
    ],
)
def test_a_lapsed_or_withdrawn_offer_may_be_made_again(
    resigned: Any, status: str, text: str
) -> None:
    rb = rematch_block(status, 1)
    for seat in (0, 1):
        html = result_panel(over(resigned, seat, rb))
        assert rematch_status(html) == status
        assert text in html
        assert ops_in(html) == {"op-rematch"}


def test_an_accepted_rematch_sends_both_pages_to_the_new_match(resigned: Any) -> None:
    rb = rematch_block("accepted", 1, new_match=99)
    for seat in (0, 1):
        html = result_panel(over(resigned, seat, rb))
        assert rematch_status(html) == "accepted"
        assert goto(html) == "/matches/99/"
        assert ops_in(html) == set()
        assert 'data-testid="rematch-link"' in html and 'href="/matches/99/"' in html


def test_the_goto_hook_is_on_the_result_panel_in_the_fragment_and_the_page(resigned: Any) -> None:
    v = over(resigned, 0, rematch_block("accepted", 0, new_match=41))
    tops = dict((a["id"], a) for _, a in top_level(frag(v)))
    assert tops["sb-settlement"]["hx-swap-oob"] == "true"
    assert goto(page(v)) == "/matches/41/"
    assert len(re.findall(r"data-goto=", page(v))) == 1


def test_a_ranked_rematch_is_labelled_ranked(resigned: Any) -> None:
    ranked = result_panel(over(resigned, 0, kind="ranked"))
    assert 'data-testid="rematch-ranked"' in ranked and ">Ranked</span>" in ranked
    casual = result_panel(over(resigned, 0, kind="casual"))
    assert 'data-testid="rematch-ranked"' not in casual


def test_same_device_rematch_is_one_button_then_the_new_match(resigned: Any) -> None:
    html = result_panel(over(resigned, None, kind="same_device"))
    assert ops_in(html) == {"op-rematch"}
    html = result_panel(
        over(resigned, None, rematch_block("accepted", 0, new_match=7), kind="same_device")
    )
    assert ops_in(html) == set() and goto(html) == "/matches/7/"


def test_nothing_about_a_rematch_while_the_match_runs(resigned: Any) -> None:
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    html = frag(seat_view(s, 0, now))
    for hook in ("rematch-status", "replay-link", "history-link", *OPS):
        assert f'data-testid="{hook}"' not in html
    assert "data-goto" not in html
    html = frag(waiting_view(0))
    assert "rematch-status" not in html and "replay-link" not in html


def test_an_aborted_match_offers_no_rematch_but_answers_an_offer(resigned: Any) -> None:
    v = waiting_view(0, rematch=rematch_block())
    v["match"].update(status="aborted", result={"winner": None, "end": "abort"})
    html = result_panel(v)
    assert "rematch-status" not in html and ops_in(html) == set()
    assert 'data-testid="replay-link"' in html
    v["match"]["rematch"] = rematch_block("open", 1)
    html = result_panel(v)
    assert ops_in(html) == {"op-rematch-accept", "op-rematch-decline"}


# --- replay and history links ---------------------------------------------------------------


@pytest.mark.parametrize("status", ["finished", "aborted", "voided"])
def test_the_replay_link_is_there_once_the_match_is_over(resigned: Any, status: str) -> None:
    result = {
        "finished": {"winner": 0, "end": "resign"},
        "aborted": {"winner": None, "end": "abort"},
        "voided": {"winner": None, "end": "void", "reason": VOID_STAFF},
    }[status]
    for seat, name in ((0, "alice"), (1, "bob")):
        html = result_panel(over(resigned, seat, status=status, result=result))
        assert re.search(r'href="/matches/12/replay/" data-testid="replay-link"', html)
        assert re.search(rf'href="/u/{name}/matches/" data-testid="history-link"', html)


def test_same_device_history_is_the_account_holders(resigned: Any) -> None:
    html = result_panel(over(resigned, None, kind="same_device"))
    assert 'href="/u/alice/matches/" data-testid="history-link"' in html


# --- voided matches ------------------------------------------------------------------------


@pytest.mark.parametrize("reason", [VOID_OUTAGE, VOID_STAFF])
def test_a_voided_match_shows_void_and_its_reason_to_both_players(
    resigned: Any, reason: str
) -> None:
    for seat in (0, 1):
        v = over(
            resigned,
            seat,
            status="voided",
            result={"winner": None, "end": "void", "reason": reason},
            void_reason=reason,
        )
        html = result_panel(v)
        assert 'data-winner="" data-end="void"' in html
        assert "Match voided (no rating result)" in html
        assert reason.replace("'", "&#39;") in html
        assert ops_in(html) == {"op-rematch"}  # a void is the service's fault: play again
        assert "This match was voided." in element(frag(v), "sb-status")
        ja = result_panel(v, "ja")
        assert "対局中止（レーティング結果なし）" in ja
        with translation.override("ja"):
            translated = translation.gettext(reason)
        assert translated != reason and translated in ja


# --- Japanese ------------------------------------------------------------------------------


def test_rematch_in_japanese(resigned: Any) -> None:
    html = result_panel(over(resigned, 0), "ja")
    assert ">再戦</button>" in html and "リプレイ" in html
    rb = rematch_block("open", 0)
    assert "再戦を申し込みました" in result_panel(over(resigned, 0, rb), "ja")
    theirs = result_panel(over(resigned, 1, rb), "ja")
    assert ">受ける</button>" in theirs and ">断る</button>" in theirs
    declined = result_panel(over(resigned, 0, rematch_block("declined", 0)), "ja")
    assert "相手は再戦を断りました" in declined
    ranked = result_panel(over(resigned, 0, kind="ranked"), "ja")
    assert "レーティング戦" in ranked


def test_render_build_keeps_rematch_out_of_a_live_view(resigned: Any) -> None:
    s, now = first_state(lambda s: s.phase == "play" and len(s.layout.placed) > 3)
    ctx = build(seat_view(s, 0, now, rematch=rematch_block("open", 1)))
    assert ctx["rematch"] is None and ctx["after"] is None
