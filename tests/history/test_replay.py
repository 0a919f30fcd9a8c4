"""/matches/<id>/replay/: a match that is over, decision by decision, both hands shown."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

import engine
from engine.tiles import ALL_TILES
from history import replay as replays
from matches.models import Match, MatchEvent
from matches.ui.text import tile_label
from ratings.models import RatingChange

DECISIONS = ("place", "pass", "bid", "accept", "decline", "resign")


def _url(m: Match, step: int | None = None) -> str:
    """The replay at ``step``, counted from 1 as the page counts."""
    url = reverse("history:replay", args=[m.pk])
    return url if step is None else f"{url}?step={step}"


def _tiles(html: str, attr: str) -> list[tuple[int, int]]:
    block = re.search(rf"<[uo]l[^>]*{attr}[^>]*>(.*?)</[uo]l>", html, re.S)
    assert block, attr
    return [(int(a), int(b)) for a, b in re.findall(r"\[(\d)\|(\d)\]", block[1])]


def _hand(html: str, seat: int) -> list[tuple[int, int]]:
    return _tiles(html, f'data-hand="{seat}"')


def _board(html: str) -> tuple[set[tuple[int, int]], list[int]]:
    """The tiles drawn on the page's board and the counted-end numbers drawn on it."""
    svg = re.search(r'<div class="board".*?</div>', html, re.S)
    assert svg, "no board"
    tiles = {(int(a), int(b)) for a, b in re.findall(r'data-tile="(\d)-(\d)"', svg[0])}
    counts = [int(c) for c in re.findall(r'<text class="pos__num"[^>]*>(\d+)</text>', svg[0])]
    return tiles, counts


@pytest.fixture
def played(tables: Any, alice: Any, bob: Any) -> Match:
    """A casual match with 40 real decisions (over more than one hand), then bob resigns."""
    m = tables.play(tables.start(tables.casual(alice, bob)), 40)
    assert not m.is_over
    return tables.resign(m, bob)


def _deals(m: Match) -> dict[int, dict[str, Any]]:
    return {e.data["hand"]: e.data for e in MatchEvent.objects.filter(match=m, kind="deal")}


def _logged(m: Match) -> list[dict[str, Any]]:
    return [e.data for e in MatchEvent.objects.filter(match=m).order_by("id")]


def test_every_step_holds_all_28_tiles_exactly_once(played: Match) -> None:
    rp = replays.build(played)
    assert not rp.broken
    assert len(_deals(played)) >= 2  # the fixture really played more than one hand
    for step in rp.steps:
        assert step.hands is not None and step.talon is not None
        tiles = [*step.hands[0], *step.hands[1], *step.talon, *(p.tile for p in step.layout)]
        assert Counter(tiles) == Counter(ALL_TILES), step.text


def test_a_step_is_a_decision_or_a_deal_and_never_a_single_draw(played: Match) -> None:
    log = _logged(played)
    rp = replays.build(played)
    wanted = [e["type"] for e in log if e["type"] in DECISIONS or e["type"] == "hand_start"]
    assert [s.kind for s in rp.steps] == wanted
    assert "draw" in [e["type"] for e in log]  # the fixture drew, so grouping was needed
    assert len(rp.steps) < len(
        [e for e in log if e["type"] in (*DECISIONS, "draw", "hand_start", "hand_end")]
    )


def test_a_turns_draws_belong_to_the_placement_or_pass_that_follows(played: Match) -> None:
    log = _logged(played)
    rp = replays.build(played)
    # Every drawn tile, in order, is in the draws of exactly one step.
    drawn = [tuple(e["tile"]) for e in log if e["type"] == "draw"]
    assert [t for s in rp.steps for t in s.draws] == drawn
    with_draws = [s for s in rp.steps if s.draws]
    assert with_draws
    for s in with_draws:
        # The drawer's own turn: it placed (the last tile drawn, if it fitted) or passed
        # — or resigned instead, which a player may do at any moment (RULES §1).
        assert s.kind in ("place", "pass", "resign")
        assert s.text.count("[") >= len(s.draws) + (s.kind == "place")
        if s.kind == "place":
            assert s.tile == s.draws[-1]


def test_draws_the_opponents_resignation_interrupted_are_still_the_drawers(
    tables: Any, alice: Any, bob: Any
) -> None:
    # The server draws for the player who cannot place, and the other player resigns
    # before the drawer decides: that step tells both, and the draws stay the drawer's.
    m, drawer = tables.until_drawn(tables.start(tables.casual(alice, bob)))
    drawn = [tuple(e["tile"]) for e in _logged(m) if e["type"] == "draw"]
    m = tables.resign(m, tables.user_at(m, 1 - drawer))
    rp = replays.build(m)
    assert not rp.broken
    last = rp.steps[-1]
    assert (last.kind, last.player, last.drawer) == ("resign", 1 - drawer, drawer)
    assert [t for s in rp.steps for t in s.draws] == drawn  # each drawn tile once, in order
    assert last.draws and all(tile_label(t) in last.text for t in last.draws)
    assert all(s.drawer == s.player for s in rp.steps[:-1] if s.draws)


def test_the_end_of_a_hand_and_of_the_match_belong_to_the_decision_that_caused_them(
    played: Match,
) -> None:
    rp = replays.build(played)
    names = played.names()
    step = -1
    endings = 0
    for e in _logged(played):
        if e["type"] in DECISIONS or e["type"] == "hand_start":
            step += 1
        elif e["type"] in ("hand_end", "match_end"):
            endings += 1
            assert rp.steps[step].kind in DECISIONS
            assert replays.describe(e, names) in rp.steps[step].text
    assert endings >= 2
    last = rp.steps[-1]
    assert last.kind == "resign" and last.text.endswith(
        replays.describe({"type": "match_end", "winner": 0}, names)
    )


def test_the_last_step_has_the_hands_the_server_ended_with(played: Match) -> None:
    final = engine.from_dict(played.state)
    last = replays.build(played).steps[-1]
    assert last.hands == (tuple(final.hands[0]), tuple(final.hands[1]))
    assert list(last.balances) == final.balances


def test_the_page_shows_both_hands_as_dealt_when_a_hand_starts(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    rp = replays.build(played)
    deals = _deals(played)
    starts = [s for s in rp.steps if s.kind == "hand_start"]
    assert len(starts) >= 2
    for s in starts:
        html = client.get(_url(played, s.index + 1)).content.decode()
        dealt = deals[s.hand_no]["hands"]
        for seat in (0, 1):
            assert _hand(html, seat) == [tuple(t) for t in dealt[seat]]
        assert _tiles(html, "data-talon") == [tuple(t) for t in deals[s.hand_no]["talon"]]
        assert _board(html) == (set(), [])  # nothing on the table yet


def test_the_page_draws_the_board_and_both_hands_at_every_step(
    client: Client, played: Match, bob: Any
) -> None:
    client.force_login(bob)
    rp = replays.build(played)
    for s in rp.steps:
        html = client.get(_url(played, s.index + 1)).content.decode()
        assert f'data-step="{s.index + 1}"' in html
        hands = (_hand(html, 0), _hand(html, 1))
        assert hands == (list(s.hands[0]), list(s.hands[1]))
        tiles, counts = _board(html)
        assert tiles == {p.tile for p in s.layout}
        assert sorted(counts) == sorted(v for _t, v in s.ends)
        if s.kind == "place":
            # The placed tile left its player's hand for the table, marked as the last one.
            assert s.tile not in hands[s.player]
            last = rf'class="domino( is-spinner)? is-last"[^>]* data-tile="{s.tile[0]}-{s.tile[1]}"'
            assert re.search(last, html)
        else:
            assert "is-last" not in html


def test_the_page_offers_a_jump_to_the_deal_of_every_hand(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    rp = replays.build(played)
    html = client.get(_url(played, len(rp.steps))).content.decode()
    jumps = re.findall(r'data-testid="replay-hand" data-first="(\d+)"', html)
    firsts = [s.index + 1 for s in rp.steps if s.kind == "hand_start"]
    assert [int(j) for j in jumps] == firsts
    for first in firsts:
        assert f'href="?step={first}"' in html


def test_the_page_charts_balances_and_lists_the_clock_per_decision(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    html = client.get(_url(played)).content.decode()
    assert html.count("<polyline") == 2  # one line per player
    assert 'class="chart__marker"' in html
    assert "replay-clock" in html
    rp = replays.build(played)
    assert rp.decisions and all(d.used is not None for d in rp.decisions)


def test_it_opens_at_step_1_and_the_step_is_clamped(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    steps = len(replays.build(played).steps)

    def shown(url: str) -> str:
        html = client.get(url).content.decode()
        return re.search(r'data-step="(\d+)"', html)[1]

    assert shown(_url(played)) == "1"
    assert shown(_url(played, 10_000)) == str(steps)
    assert shown(_url(played, -3)) == "1"
    assert shown(_url(played) + "?step=x") == "1"
    first = client.get(_url(played)).content.decode()
    assert 'rel="prev"' not in first and 'rel="next"' in first
    last = client.get(_url(played, steps)).content.decode()
    assert 'rel="next"' not in last and 'rel="prev"' in last


def test_a_live_match_has_no_replay_even_for_its_players(
    client: Client, tables: Any, alice: Any, bob: Any, staff: Any
) -> None:
    waiting = tables.casual(alice, bob)
    live = tables.play(tables.start(tables.casual(alice, bob)), 3)
    for user in (alice, bob, staff):
        client.force_login(user)
        assert client.get(_url(live)).status_code == 404
        assert client.get(_url(waiting)).status_code == 404


def test_an_outsider_cannot_watch_a_replay(client: Client, played: Match, outsider: Any) -> None:
    client.force_login(outsider)
    response = client.get(_url(played))
    assert response.status_code == 403
    assert b"data-hand" not in response.content


def test_an_anonymous_visitor_is_sent_to_log_in(client: Client, played: Match) -> None:
    response = client.get(_url(played))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_staff_may_watch_a_replay(client: Client, played: Match, staff: Any) -> None:
    client.force_login(staff)
    assert client.get(_url(played)).status_code == 200


def test_an_aborted_match_replays_as_its_abort(
    client: Client, tables: Any, alice: Any, bob: Any
) -> None:
    m = tables.resign(tables.ranked(alice, bob), bob)
    client.force_login(alice)
    html = client.get(_url(m)).content.decode()
    assert 'data-kind="aborted"' in html
    assert "data-hand" not in html


def test_a_voided_match_replays_up_to_its_void(
    client: Client, tables: Any, alice: Any, bob: Any
) -> None:
    from matches.clock import voiding

    m = tables.play(tables.start(tables.ranked(alice, bob)), 6)
    assert voiding.void([m.pk], "worker lost") == [m.pk]
    rp = replays.build(m)
    assert not rp.broken and rp.steps[-1].kind == "voided"
    assert rp.steps[-1].hands is not None  # the position at the void, both hands
    client.force_login(bob)
    html = client.get(_url(m, len(rp.steps))).content.decode()
    assert 'data-kind="voided"' in html and 'data-hand="1"' in html


def test_a_same_device_match_replays_with_the_guest_by_name(
    client: Client, tables: Any, alice: Any
) -> None:
    m = tables.play(tables.start(tables.same_device(alice, "Grandma")), 12)
    m = tables.resign(m, alice)
    rp = replays.build(m)
    assert not rp.broken and rp.names == ["alice", "Grandma"]
    client.force_login(alice)
    assert "Grandma" in client.get(_url(m, 4)).content.decode()


def test_a_match_played_to_the_end_replays_without_a_break(
    tables: Any, alice: Any, bob: Any
) -> None:
    # All-in bids end the match by balance at the first auction, after a domino.
    m = tables.play(tables.start(tables.ranked(alice, bob)), 500, all_in=True)
    assert m.status == Match.Status.FINISHED and m.end_reason == "balance"
    rp = replays.build(m)
    assert not rp.broken
    kinds = [s.kind for s in rp.steps]
    assert {"bid", "accept"} <= set(kinds)
    assert kinds[-1] == "accept"  # the whole balance paid: the match ends with the accept
    assert rp.steps[-1].text.endswith(
        replays.describe(rp.steps[-1].event, rp.names)
        + " "
        + replays.describe({"type": "match_end", "winner": m.winner_seat}, rp.names)
    )
    assert sorted(rp.steps[-1].balances) == [0, 300]
    assert RatingChange.objects.filter(match=m).count() == 2  # balance ends are rated
    final = engine.from_dict(m.state)
    assert rp.steps[-1].hands == (tuple(final.hands[0]), tuple(final.hands[1]))


def test_a_step_link_fetches_only_the_step(client: Client, played: Match, alice: Any) -> None:
    client.force_login(alice)
    full = client.get(_url(played, 3)).content.decode()
    step = client.get(_url(played, 3), HTTP_HX_REQUEST="true").content.decode()
    assert step.lstrip().startswith('<div id="replay"') and 'data-step="3"' in step
    assert "<header" not in step and "replay-steps" not in step
    assert len(step) * 3 < len(full)
    # htmx restoring its history asks for the whole page again.
    restore = client.get(
        _url(played, 3), HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    ).content.decode()
    assert "<header" in restore and "replay-steps" in restore


def test_the_steps_are_told_in_the_language_of_each_request(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    deal = re.compile(r'data-testid="replay-text"><strong>([^<]*)</strong>')
    ja = deal.search(client.get(_url(played, 1)).content.decode())
    client.cookies["django_language"] = "en"
    en = deal.search(client.get(_url(played, 1)).content.decode())
    assert ja and en
    assert ja[1].startswith("ハンド1") and en[1].startswith("Hand 1 dealt")
