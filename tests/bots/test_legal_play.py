"""Every level, in either seat, answers every decision of whole matches with a legal action.

The test holds the real match state; each player is given only its seat's
``engine.view_for`` after every change (as the socket shows it), and its
answer is read as the server would read a frame and checked against
``engine.legal_actions`` of the real state before it is applied.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from bots import Player
from engine import HAND_OVER, MATCH_OVER, Action, Deal

PAIRS = [(a, b) for a in (1, 2, 3) for b in (1, 2, 3)]
# Level 3 with a small budget and no time cap: quick, and the same on every run.
BUDGET: dict[str, Any] = {"playouts": 6, "time_limit_ms": None}
MAX_HANDS = 150
SIDES = {"low", "high", "straight_a", "straight_b", "branch_a", "branch_b"}


def tile_of(x: Any) -> engine.Tile:
    assert isinstance(x, list) and len(x) == 2 and all(type(h) is int for h in x), x
    return engine.normalize(x)


def read_frame(frame: Any, seat: int) -> Action:
    """The action a frame asks for, read strictly as the match socket reads it."""
    assert isinstance(frame, dict), frame
    op = frame["op"]
    if op == "place":
        assert set(frame) == {"op", "tile", "at"}, frame
        at = frame["at"]
        if at is not None:
            assert set(at) == {"tile", "side"} and at["side"] in SIDES, frame
            at = (tile_of(at["tile"]), at["side"])
        return Action("place", seat, tile=tile_of(frame["tile"]), at=at)
    if op == "bid":
        assert set(frame) == {"op", "amount"} and type(frame["amount"]) is int, frame
        return Action("bid", seat, amount=frame["amount"])
    assert op in ("accept", "decline") and set(frame) == {"op"}, frame
    return Action(op, seat)


def play(levels: tuple[int, int], seed: int, balances: tuple[int, int], jockey: int | None) -> int:
    """Play a whole match, checking every answer; the number of decisions taken."""
    rng = random.Random(seed)
    players = [
        Player(level, random.Random(seed + seat), **BUDGET) for seat, level in enumerate(levels)
    ]
    s = engine.new_match(Deal.shuffled(rng), clock=None, balances=balances, jockey=jockey)
    decisions = 0
    while s.phase != MATCH_OVER:
        assert s.hand_no < MAX_HANDS, "the match did not end"
        if s.phase == HAND_OVER:
            s, _ = engine.next_hand(s, Deal.shuffled(rng), 0)
        to_act = s.to_act
        forced = engine.forced_action(s)
        answers = [players[seat].observe(engine.view_for(s, seat, 0)) for seat in (0, 1)]
        # Nothing to say off turn, nor when the server plays a forced action.
        assert all(answers[seat] is None for seat in (0, 1) if seat != to_act or forced)
        if forced is None:
            assert to_act is not None
            action = read_frame(answers[to_act], to_act)
            assert action in engine.legal_actions(s), (levels[to_act], answers[to_act])
            decisions += 1
        else:
            action = forced
        s, _ = engine.apply(s, action, 0)
    return decisions


@pytest.mark.parametrize("levels", PAIRS, ids=[f"{a}v{b}" for a, b in PAIRS])
@settings(max_examples=3, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    # Uneven balances make short matches and auctions near a whole balance.
    balance=st.integers(15, 285),
    jockey=st.sampled_from([None, 0, 1]),
)
def test_every_answer_is_legal_in_the_real_state(
    levels: tuple[int, int], seed: int, balance: int, jockey: int | None
) -> None:
    assert play(levels, seed, (balance, 300 - balance), jockey) > 0
