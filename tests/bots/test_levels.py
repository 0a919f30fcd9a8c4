"""What a person playing each level would notice."""

from __future__ import annotations

import random
from typing import Any

import pytest

import engine
from bots import Player, decide
from bots.arena import play_match
from engine import Action, Deal, MatchState
from tests.bots.deals import after_forced_opening, deal_of


def auction_states() -> list[MatchState]:
    """Auction decisions: opening, raising a bid, as jockey or not, rich or nearly broke."""
    out = []
    for seed in range(6):
        for jockey in (0, 1):
            for balances in ((150, 150), (40, 260), (260, 40), (20, 280)):
                s = engine.new_match(
                    Deal.shuffled(random.Random(seed)), clock=None, jockey=jockey, balances=balances
                )
                while s.phase == engine.AUCTION and len(out) < 400:
                    if engine.forced_action(s) is None:
                        out.append(s)
                    legal = engine.legal_actions(s)
                    bids = [a for a in legal if a.kind == "bid"]
                    s, _ = engine.apply(s, bids[0] if bids else legal[0], 0)
    return out


def test_level_1_never_bids_above_the_minimum_but_does_bid() -> None:
    ops = set()
    for k, s in enumerate(auction_states()):
        assert s.to_act is not None
        view = engine.view_for(s, s.to_act, 0)
        for seed in range(8):
            frame = decide(view, level=1, rng=random.Random(k * 8 + seed))
            assert frame is not None
            ops.add(frame["op"])
            if frame["op"] == "bid":
                assert frame["amount"] == view["auction"]["min_bid"] == engine.min_bid(s)
    assert ops == {"bid", "accept", "decline"}


def test_level_1_plays_at_random_among_the_legal_placements() -> None:
    s = engine.new_match(Deal.shuffled(random.Random(11)), clock=None, jockey=0)
    s, _ = engine.apply(s, Action("decline", 1), 0)  # the jockey opens with any tile
    view = engine.view_for(s, 0, 0)
    tiles = {tuple(decide(view, level=1, rng=random.Random(n))["tile"]) for n in range(60)}  # type: ignore[index]
    assert tiles == set(s.hands[0])


def immediate_scores(s: MatchState) -> dict[tuple[Any, ...], int]:
    """What each legal placement scores at once, by the engine."""
    out = {}
    for a in engine.legal_actions(s):
        if a.kind == "place":
            _, events = engine.apply(s, a, 0)
            out[(a.tile, a.at)] = events[0]["score"]
    return out


def test_level_2_takes_an_immediate_15_over_a_0() -> None:
    # Seat 0 must open with [6|6] (12 on the table). Seat 1 can answer with
    # [3|6] (12 + 3 = 15) or [5|6] (12 + 5 = 17, nothing).
    s = after_forced_opening(
        [(6, 6), (0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)],
        [(5, 6), (3, 6), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3)],
    )
    scores = immediate_scores(s)
    assert sorted(set(scores.values())) == [0, 15]
    frame = decide(engine.view_for(s, 1, 0), level=2, rng=random.Random(1))
    assert frame is not None and frame["tile"] == [3, 6]
    _, events = engine.apply(s, Action("place", 1, tile=(3, 6), at=((6, 6), "straight_a")), 0)
    assert events[0]["score"] == 15


def test_level_2_always_takes_the_most_it_can_score_at_once() -> None:
    # Random legal play; at every decision with a choice, level 2 scores the most there is.
    rng = random.Random(4)
    checked = 0
    for _ in range(25):
        s = engine.new_match(Deal.shuffled(rng), clock=None)
        while s.phase == engine.PLAY:
            forced = engine.forced_action(s)
            if forced is None and s.layout.placed:
                scores = immediate_scores(s)
                frame = decide(engine.view_for(s, s.to_act, 0), level=2, rng=rng)
                assert frame is not None
                at = frame["at"]
                key = (tuple(frame["tile"]), (tuple(at["tile"]), at["side"]))
                assert scores[key] == max(scores.values())
                checked += len(set(scores.values())) > 1
            legal = engine.legal_actions(s)
            s, _ = engine.apply(s, forced or rng.choice(legal), 0)
    assert checked >= 30  # decisions where scoring differed between placements


def test_level_2_does_not_leave_the_opponent_an_easy_multiple_of_five() -> None:
    # [6|6] opens (12). Seat 1 scores nothing either way: [1|6] makes 13 and
    # [4|6] 16. After [4|6] the opponent scores with [3|4] (15) or [4|4] (20);
    # after [1|6] only [1|3] (15) does. Level 2 plays [1|6].
    s = after_forced_opening(
        [(6, 6), (1, 3), (3, 4), (4, 4), (0, 4), (0, 5), (1, 2)],
        [(1, 6), (4, 6), (0, 1), (0, 2), (0, 3), (2, 2), (2, 3)],
    )
    assert set(immediate_scores(s).values()) == {0}
    frame = decide(engine.view_for(s, 1, 0), level=2, rng=random.Random(1))
    assert frame is not None and frame["tile"] == [1, 6]


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # [5|5] opens for 10: worth paying 15 to open.
        ([(5, 5), (0, 1), (0, 2), (1, 2), (1, 1), (2, 2), (1, 3)], "bid"),
        # No opening tile scores: let the jockey open.
        ([(0, 6), (0, 1), (0, 2), (1, 2), (1, 1), (2, 2), (1, 3)], "decline"),
    ],
)
def test_level_2_bids_for_the_opening_only_with_a_hand_worth_it(
    hand: list[engine.Tile], expected: str
) -> None:
    other = [t for t in engine.ALL_TILES if t not in hand][:7]
    s = engine.new_match(deal_of(hand, other), clock=None, jockey=1)
    frame = decide(engine.view_for(s, 0, 0), level=2, rng=random.Random(1))
    assert frame is not None and frame["op"] == expected
    if expected == "bid":
        assert frame["amount"] == 15


def test_level_3_decides_the_same_with_the_same_seed() -> None:
    rng = random.Random(9)
    s = engine.new_match(Deal.shuffled(rng), clock=None, jockey=1)
    checked = 0
    while s.phase != engine.MATCH_OVER and checked < 12:
        if s.phase == engine.HAND_OVER:
            s, _ = engine.next_hand(s, Deal.shuffled(rng), 0)
        forced = engine.forced_action(s)
        if forced is None:
            view = engine.view_for(s, s.to_act, 0)
            answers = [
                decide(view, level=3, rng=random.Random(42), playouts=60, time_limit_ms=None)
                for _ in range(2)
            ]
            assert answers[0] == answers[1] is not None
            checked += 1
        s, _ = engine.apply(s, forced or rng.choice(engine.legal_actions(s)), 0)
    assert checked == 12


def test_a_whole_level_3_match_replays_exactly_from_its_seed() -> None:
    first = play_match((3, 1), 5, playouts=8)
    again = play_match((3, 1), 5, playouts=8)
    assert (first.winner, first.hands, first.balances, first.received) == (
        again.winner,
        again.hands,
        again.balances,
        again.received,
    )


def test_level_3_beats_level_1_in_a_short_series() -> None:
    # Even a tiny budget is far stronger than random play.
    wins = sum(
        play_match(levels, seed, playouts=8).winner == levels.index(3)
        for seed in range(3)
        for levels in ((3, 1), (1, 3))
    )
    assert wins >= 5


def test_a_player_answers_only_when_its_seat_must_decide() -> None:
    s = engine.new_match(Deal.shuffled(random.Random(2)), clock=None, jockey=0)
    players = [Player(2, random.Random(seat)) for seat in (0, 1)]
    answers = [p.observe(engine.view_for(s, seat, 0)) for seat, p in enumerate(players)]
    assert answers[0] is None and answers[1] is not None  # the non-jockey speaks first
