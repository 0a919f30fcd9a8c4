"""Engine-only matches between computer players (no Django, no clock).

Each seat's ``Player`` sees only its own ``engine.view_for`` after every
action, as the match socket would show it; forced actions are applied at
once, as the server does. Deals come from a seed, hand by hand, so two
matches with the same seed deal the same tiles in the same hand numbers
(the benchmark swaps seats between such a pair).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import engine
from engine import HAND_OVER, MATCH_OVER, Action, Deal, MatchState

from . import Player

# A match that has not ended after this many hands is stopped (none did in the benchmark).
MAX_HANDS = 400


def to_action(frame: dict[str, Any], seat: int) -> Action:
    """The engine action a player's frame asks for (the server's reading of it)."""
    op = frame["op"]
    if op == "place":
        at = frame["at"]
        return Action(
            "place",
            seat,
            tile=engine.normalize(frame["tile"]),
            at=None if at is None else (engine.normalize(at["tile"]), at["side"]),
        )
    if op == "bid":
        return Action("bid", seat, amount=frame["amount"])
    if op in ("accept", "decline"):
        return Action(op, seat)
    raise ValueError(f"unknown op {op!r}")


def deal(seed: int, hand_no: int) -> Deal:
    """The deal of hand ``hand_no`` in the matches of ``seed``."""
    return Deal.shuffled(random.Random(seed * 100_003 + hand_no))


@dataclass
class Result:
    """How one match went. Seats are 0 and 1; ``levels[seat]`` is who sat there."""

    levels: tuple[int, int]
    seed: int
    winner: int | None
    hands: int
    balances: list[int]
    # Points each seat received over the match: placements, block settlements, auction payments.
    received: list[int] = field(default_factory=lambda: [0, 0])
    # Milliseconds per real decision (not forced), by seat: wall time and this process's CPU time.
    decision_ms: list[list[float]] = field(default_factory=lambda: [[], []])
    decision_cpu_ms: list[list[float]] = field(default_factory=lambda: [[], []])


# A check run before every decision's action is applied: (state, seat, frame).
Check = Callable[[MatchState, int, dict[str, Any]], None]


def play_match(
    levels: tuple[int, int],
    seed: int,
    *,
    playouts: int | None = None,
    time_limit_ms: float | None = None,
    check: Check | None = None,
) -> Result:
    """Play one match between ``levels[0]`` (seat 0) and ``levels[1]`` (seat 1).

    ``playouts`` and ``time_limit_ms`` set level 3's budget (``None``: the
    player's default playouts and no time cap, so the match is reproducible).
    """
    budget: dict[str, Any] = {"time_limit_ms": time_limit_ms}
    if playouts is not None:
        budget["playouts"] = playouts
    players = [
        Player(level, random.Random(seed * 2 + seat), **budget) for seat, level in enumerate(levels)
    ]
    s = engine.new_match(deal(seed, 0), clock=None)
    result = Result(levels, seed, None, 1, list(s.balances))
    while s.phase != MATCH_OVER and s.hand_no < MAX_HANDS:
        if s.phase == HAND_OVER:
            s, _ = engine.next_hand(s, deal(seed, s.hand_no + 1), 0)
            result.hands += 1
        # Every seat sees every change, as over the socket (so its memory has no gaps).
        views = [engine.view_for(s, seat, 0) for seat in (0, 1)]
        action = engine.forced_action(s)
        if action is None:
            seat = s.to_act
            assert seat is not None
            players[1 - seat].memory.update(views[1 - seat])
            t0, c0 = time.perf_counter(), time.process_time()
            frame = players[seat].observe(views[seat])
            result.decision_cpu_ms[seat].append((time.process_time() - c0) * 1000)
            result.decision_ms[seat].append((time.perf_counter() - t0) * 1000)
            if frame is None:
                raise AssertionError(f"level {levels[seat]} had no answer on its turn")
            if check is not None:
                check(s, seat, frame)
            action = to_action(frame, seat)
        else:
            for seat in (0, 1):
                players[seat].memory.update(views[seat])
        s, events = engine.apply(s, action, 0)
        _count(events, result.received)
    result.winner = s.winner
    result.balances = list(s.balances)
    return result


def _count(events: list[dict[str, Any]], received: list[int]) -> None:
    for ev in events:
        if ev["type"] == "place":
            received[ev["player"]] += ev["score"]
        elif ev["type"] == "accept":
            received[1 - ev["payer"]] += ev["cost"]
        elif ev["type"] == "hand_end" and ev["receiver"] is not None:
            received[ev["receiver"]] += ev["moved"]
