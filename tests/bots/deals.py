"""Hand-made deals for the computer player's tests."""

from __future__ import annotations

import engine
from engine import Deal, MatchState, Tile


def deal_of(seat0: list[Tile], seat1: list[Tile]) -> Deal:
    """Seat 0's and seat 1's tiles as given; the rest is the talon, in set order."""
    rest = [t for t in engine.ALL_TILES if t not in seat0 and t not in seat1]
    return Deal.from_order([*seat0, *seat1, *rest])


def after_forced_opening(seat0: list[Tile], seat1: list[Tile]) -> MatchState:
    """A first hand dealt so, once its forced opening (the server's move) is on the table."""
    s = engine.new_match(deal_of(seat0, seat1), clock=None)
    s, _ = engine.apply(s, engine.forced_action(s), 0)
    return s
