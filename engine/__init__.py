"""Spectacular Bid: the rules engine (pure Python, no I/O, no clock reads).

The public surface:

- ``new_match``, ``next_hand``, ``Deal`` — start a match and deal hands from a
  shuffled order the caller supplies;
- ``apply``, ``expire``, ``deadline``, ``credit``, ``legal_actions``, ``forced_action`` —
  play it, with time passed in as integer milliseconds;
- ``view_for``, ``snapshot`` — what a seat (or a spectator) may see;
- ``berserk``, ``can_berserk`` — an arena player halving its own main time;
- ``to_dict``, ``from_dict`` — exact JSON-compatible storage.
"""

from .berserk import berserk, berserk_main_ms, can_berserk
from .errors import IllegalAction
from .match import (
    AUCTION,
    BID_STEP,
    HAND_OVER,
    LOG_SIZE,
    MATCH_OVER,
    PLAY,
    SCORE_STEP,
    Action,
    ClockConfig,
    Deal,
    Event,
    MatchState,
    apply,
    bid_cost,
    clocks_at,
    credit,
    deadline,
    expire,
    forced_action,
    legal_actions,
    max_bid,
    min_bid,
    new_match,
    next_hand,
    points_for,
)
from .serialize import FORMAT, from_dict, to_dict
from .tiles import ALL_TILES, Tile, normalize
from .view import event_for, snapshot, view_for

__all__ = [
    "ALL_TILES",
    "AUCTION",
    "BID_STEP",
    "FORMAT",
    "HAND_OVER",
    "LOG_SIZE",
    "MATCH_OVER",
    "PLAY",
    "SCORE_STEP",
    "Action",
    "ClockConfig",
    "Deal",
    "Event",
    "IllegalAction",
    "MatchState",
    "Tile",
    "apply",
    "berserk",
    "berserk_main_ms",
    "bid_cost",
    "can_berserk",
    "clocks_at",
    "credit",
    "deadline",
    "event_for",
    "expire",
    "forced_action",
    "from_dict",
    "legal_actions",
    "max_bid",
    "min_bid",
    "new_match",
    "next_hand",
    "normalize",
    "points_for",
    "snapshot",
    "to_dict",
    "view_for",
]
