"""What the player infers about the opponent's hand, and the worlds it samples from that.

The test plays hands with the real state in hand, so it knows what each seat
could have seen; the player gets only the seat's views and its memory.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

import engine
from bots import Memory
from bots.infer import Belief, belief
from bots.table import ALL_MASK, HAS, mask_of
from engine import PLAY, Deal, MatchState
from tests.bots.deals import after_forced_opening

WORLDS = 30


@dataclass
class Moment:
    """A decision of seat 0 in play, with what the test knows and the player may not."""

    state: MatchState
    view: dict[str, object]
    events: list[dict[str, object]]
    # The end values open when the opponent (seat 1) last drew or passed, if it did.
    last_blocked_on: set[int] | None


def random_action(s: MatchState, rng: random.Random) -> engine.Action:
    """A random legal action; in the auction only the smallest bid, so no one bids a match away."""
    legal = engine.legal_actions(s)
    return rng.choice([a for a in legal if a.kind != "bid" or a.amount == engine.min_bid(s)])


def seat0_decisions(seed: int, hands: int = 4) -> Iterator[Moment]:
    """Random legal play of a match's first hands; every moment seat 0 must decide in play."""
    rng = random.Random(seed)
    s = engine.new_match(Deal.shuffled(rng), clock=None, jockey=rng.choice([None, 0, 1]))
    memory = Memory()
    blocked: set[int] | None = None
    hand_no = s.hand_no
    while s.phase != engine.MATCH_OVER and s.hand_no < hands:
        if s.phase == engine.HAND_OVER:
            s, _ = engine.next_hand(s, Deal.shuffled(rng), 0)
        memory.update(engine.view_for(s, 0, 0))
        if s.hand_no != hand_no:
            hand_no, blocked = s.hand_no, None
        forced = engine.forced_action(s)
        if forced is None and s.to_act == 0 and s.phase == PLAY:
            yield Moment(s, engine.view_for(s, 0, 0), memory.events, blocked)
        opp_blocked = forced is not None and forced.player == 1 and forced.kind in ("draw", "pass")
        # Only a turn's first draw counts: the open ends stay the same while it draws.
        if opp_blocked and (s.log[-1]["type"] != "draw" or s.log[-1]["player"] != 1):
            blocked = {v for _, _, v in s.layout.open_positions()}
        s, _ = engine.apply(s, forced or random_action(s, rng), 0)


def fitting(values: set[int]) -> int:
    m = 0
    for v in values:
        m |= HAS[v]
    return m


def samples(b: Belief, seed: int) -> list[tuple[int, list[int]]]:
    rng = random.Random(seed)
    return [b.sample(rng) for _ in range(WORLDS)]


@pytest.mark.parametrize("seed", range(12))
def test_sampled_worlds_keep_sizes_and_never_move_a_tile_the_view_places(seed: int) -> None:
    checked = 0
    for m in seat0_decisions(seed):
        s, view = m.state, m.view
        mine = mask_of(view["hand"])  # type: ignore[arg-type]
        on_table = mask_of([p.tile for p in s.layout.placed])
        b = belief(view, m.events)
        assert b.informed
        for opp, talon in samples(b, seed):
            assert opp.bit_count() == len(s.hands[1]) == view["hand_sizes"][1]  # type: ignore[index]
            assert len(talon) == len(set(talon)) == len(s.talon) == view["talon"]
            talon_mask = mask_of([engine.ALL_TILES[t] for t in talon])
            assert not opp & (mine | on_table) and not talon_mask & (mine | on_table | opp)
            assert opp | talon_mask | mine | on_table == ALL_MASK
        checked += 1
    assert checked > 0


def test_the_opponent_is_never_given_a_tile_for_the_ends_it_drew_or_passed_on() -> None:
    constrained = 0
    for seed in range(40):
        for m in seat0_decisions(seed):
            if m.last_blocked_on is None:
                continue
            forbidden = fitting(m.last_blocked_on)
            # Since its last draw or pass, the opponent drew nothing: every tile
            # it holds was in its hand then, or drawn then without fitting.
            assert not mask_of(m.state.hands[1]) & forbidden  # the test's own premise
            b = belief(m.view, m.events)
            unseen_fitting = b.unseen & forbidden
            for opp, _ in samples(b, seed):
                assert not opp & forbidden, (m.last_blocked_on, m.events)
            if unseen_fitting:
                constrained += 1
    # Enough cases where a careless sampler could have dealt a forbidden tile.
    assert constrained >= 20


# Seat 0 opens with [5|6], the highest tile dealt: nobody holds a double.
NO_DOUBLES = (
    [(5, 6), (0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (0, 4)],
    [(4, 5), (0, 3), (1, 4), (2, 4), (3, 4), (0, 5), (1, 5)],
)
DOUBLES = mask_of([(v, v) for v in range(7)])


def test_a_forced_opening_proves_the_opponent_was_dealt_nothing_higher() -> None:
    # Seat 1 opens with [5|5], so [6|6] was dealt to nobody: it is in the talon.
    s = after_forced_opening(
        [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (0, 4), (5, 6)],
        [(5, 5), (0, 5), (1, 5), (2, 4), (3, 4), (0, 6), (1, 6)],
    )
    view = engine.view_for(s, 0, 0)
    six_six = mask_of([(6, 6)])
    worlds = samples(belief(view, view["events"]), 1)
    assert all(not opp & six_six for opp, _ in worlds)
    assert any(six_six & mask_of([engine.ALL_TILES[t] for t in talon]) for _, talon in worlds)


def test_a_forced_opening_without_a_double_proves_every_double_is_in_the_talon() -> None:
    view = engine.view_for(after_forced_opening(*NO_DOUBLES), 1, 0)
    for opp, _ in samples(belief(view, view["events"]), 2):
        assert not opp & DOUBLES


def test_without_the_whole_hand_in_memory_only_the_sizes_constrain() -> None:
    view = engine.view_for(after_forced_opening(*NO_DOUBLES), 1, 0)
    missing_start = [e for e in view["events"] if e["type"] != "hand_start"]
    b = belief(view, missing_start)
    assert not b.informed and b.slots == (0,) * 6
    # Nothing then proves the opponent holds no double; some world gives it one.
    assert any(opp & DOUBLES for opp, _ in samples(b, 3))


def test_a_memory_keeps_the_whole_hand_though_each_frame_brings_only_new_events() -> None:
    rng = random.Random(5)
    s = engine.new_match(Deal.shuffled(rng), clock=None)
    memory = Memory()
    seen: dict[int, dict[str, object]] = {}  # everything seat 0 was shown this hand, by seq
    last = 0
    longest = 0
    while s.phase != engine.MATCH_OVER and s.hand_no < 6:
        view = engine.view_for(s, 0, 0)
        seen.update({e["seq"]: e for e in view["events"] if e["hand"] == s.hand_no})
        # The platform pushes only the events new since the last frame.
        memory.update({**view, "events": [e for e in view["events"] if e["seq"] > last]})
        last = max([last, *(e["seq"] for e in view["events"])])
        if s.phase == engine.HAND_OVER:
            assert memory.events == [seen[k] for k in sorted(seen)]
            longest = max(longest, len(seen))
            s, _ = engine.next_hand(s, Deal.shuffled(rng), 0)
            seen = {}
            continue
        assert memory.hand_no == s.hand_no
        assert all(e["hand"] == s.hand_no for e in memory.events)
        # Seat 1's draws show no tile to seat 0.
        assert not any("tile" in e for e in memory.events if e["type"] == "draw" and e["player"])
        s, _ = engine.apply(s, engine.forced_action(s) or random_action(s, rng), 0)
    assert longest > engine.match.LOG_SIZE  # more than any one view holds
