"""/matches/<id>/replay/: every step of a match that is over, both hands shown."""

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
from ratings.models import RatingChange


def _url(m: Match, step: int | None = None) -> str:
    url = reverse("history:replay", args=[m.pk])
    return url if step is None else f"{url}?step={step}"


def _tiles(html: str, attr: str) -> list[tuple[int, int]]:
    block = re.search(rf"<[uo]l[^>]*{attr}[^>]*>(.*?)</[uo]l>", html, re.S)
    assert block, attr
    return [(int(a), int(b)) for a, b in re.findall(r"\[(\d)\|(\d)\]", block[1])]


def _hand(html: str, seat: int) -> list[tuple[int, int]]:
    return _tiles(html, f'data-hand="{seat}"')


@pytest.fixture
def played(tables: Any, alice: Any, bob: Any) -> Match:
    """A casual match with 40 real decisions (over more than one hand), then bob resigns."""
    m = tables.play(tables.start(tables.casual(alice, bob)), 40)
    assert not m.is_over
    return tables.resign(m, bob)


def _deals(m: Match) -> dict[int, dict[str, Any]]:
    return {e.data["hand"]: e.data for e in MatchEvent.objects.filter(match=m, kind="deal")}


def test_every_step_holds_all_28_tiles_exactly_once(played: Match) -> None:
    rp = replays.build(played)
    assert not rp.broken
    assert len(_deals(played)) >= 2  # the fixture really played more than one hand
    for step in rp.steps:
        assert step.hands is not None and step.talon is not None
        tiles = [*step.hands[0], *step.hands[1], *step.talon, *(p.tile for p in step.layout)]
        assert Counter(tiles) == Counter(ALL_TILES), step.text


def test_it_has_a_step_for_every_event_worth_showing(played: Match) -> None:
    rp = replays.build(played)
    shown = [
        e.kind
        for e in MatchEvent.objects.filter(match=played).order_by("id")
        if e.kind not in ("created", "ready", "started", "deal", "reveal")
    ]
    assert [s.kind for s in rp.steps] == shown
    assert rp.steps[-1].kind == "match_end"
    assert rp.steps[-2].kind == "resign"


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
        html = client.get(_url(played, s.index)).content.decode()
        dealt = deals[s.hand_no]["hands"]
        for seat in (0, 1):
            assert _hand(html, seat) == [tuple(t) for t in dealt[seat]]
        assert _tiles(html, "data-talon") == [tuple(t) for t in deals[s.hand_no]["talon"]]


def test_the_page_shows_both_hands_at_every_step(client: Client, played: Match, bob: Any) -> None:
    client.force_login(bob)
    rp = replays.build(played)
    for s in rp.steps:
        html = client.get(_url(played, s.index)).content.decode()
        assert f'data-step="{s.index}"' in html
        hands = (_hand(html, 0), _hand(html, 1))
        assert hands == (list(s.hands[0]), list(s.hands[1]))
        if s.kind == "place":
            # The placed tile left its player's hand for the layout.
            assert s.tile not in hands[s.player]
            assert f"[{s.tile[0]}|{s.tile[1]}]" in html.split("data-layout", 1)[1]
        if s.kind == "draw":
            assert s.tile in hands[s.player]


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


def test_the_step_is_clamped_and_defaults_to_the_end(
    client: Client, played: Match, alice: Any
) -> None:
    client.force_login(alice)
    last = len(replays.build(played).steps) - 1
    assert f'data-step="{last}"' in client.get(_url(played)).content.decode()
    assert f'data-step="{last}"' in client.get(_url(played, 10_000)).content.decode()
    assert 'data-step="0"' in client.get(_url(played, -3)).content.decode()
    assert f'data-step="{last}"' in client.get(_url(played) + "?step=x").content.decode()


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
    from matches import voiding

    m = tables.play(tables.start(tables.ranked(alice, bob)), 6)
    assert voiding.void([m.pk], "worker lost") == [m.pk]
    rp = replays.build(m)
    assert not rp.broken and rp.steps[-1].kind == "voided"
    assert rp.steps[-1].hands is not None  # the position at the void, both hands
    client.force_login(bob)
    html = client.get(_url(m)).content.decode()
    assert 'data-kind="voided"' in html and 'data-hand="1"' in html


def test_a_same_device_match_replays_with_the_guest_by_name(
    client: Client, tables: Any, alice: Any
) -> None:
    m = tables.play(tables.start(tables.same_device(alice, "Grandma")), 12)
    m = tables.resign(m, alice)
    rp = replays.build(m)
    assert not rp.broken and rp.names == ["alice", "Grandma"]
    client.force_login(alice)
    assert "Grandma" in client.get(_url(m, 3)).content.decode()


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
    assert kinds[-1] == "match_end"
    assert sorted(rp.steps[-1].balances) == [0, 300]
    assert RatingChange.objects.filter(match=m).count() == 2  # balance ends are rated
    final = engine.from_dict(m.state)
    assert rp.steps[-1].hands == (tuple(final.hands[0]), tuple(final.hands[1]))
