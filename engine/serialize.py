"""A match state as a JSON-compatible dict and back, exactly.

``from_dict(to_dict(s)) == s`` and ``to_dict(from_dict(d)) == d`` for every
state the engine produces. ``FORMAT`` is bumped whenever the shape changes;
an unknown format is refused rather than misread.

>>> import json
>>> from .match import ALL_TILES, Deal, new_match
>>> s = new_match(Deal.from_order(list(ALL_TILES)))
>>> d = to_dict(s)
>>> from_dict(json.loads(json.dumps(d))) == s, d["format"], d["hands"][1][-1]
(True, 1, [2, 2])
"""

from __future__ import annotations

from typing import Any

from .layout import Layout
from .match import ClockConfig, MatchState
from .tiles import Tile

FORMAT = 1


def _t(x: list[int]) -> Tile:
    return (x[0], x[1])


def to_dict(s: MatchState) -> dict[str, Any]:
    """The state as plain JSON data (lists, ints, strings, bools, None)."""
    return {
        "format": FORMAT,
        "balances": list(s.balances),
        "clock": None if s.clock is None else [s.clock.main_ms, s.clock.delay_ms],
        "main": None if s.main is None else list(s.main),
        "decision_start": s.decision_start,
        "handoff": s.handoff,
        "awaiting_reveal": s.awaiting_reveal,
        "hand_no": s.hand_no,
        "phase": s.phase,
        "to_act": s.to_act,
        "hands": [[[a, b] for a, b in s.hands[0]], [[a, b] for a, b in s.hands[1]]],
        "talon": [[a, b] for a, b in s.talon],
        "layout": [
            [
                [p.tile[0], p.tile[1]],
                None if p.at is None else [p.at[0][0], p.at[0][1], p.at[1]],
                p.player,
            ]
            for p in s.layout.placed
        ],
        "jockey": s.jockey,
        "next_jockey": s.next_jockey,
        "bid": None if s.bid is None else [s.bid[0], s.bid[1]],
        "forced_tile": None if s.forced_tile is None else list(s.forced_tile),
        "must_place": None if s.must_place is None else list(s.must_place),
        "passes": s.passes,
        "winner": s.winner,
        "end": s.end,
        "hand_end": s.hand_end,
        "last_t": s.last_t,
        "settlement": s.settlement,
        "log": list(s.log),
        "seq": s.seq,
    }


def from_dict(d: dict[str, Any]) -> MatchState:
    """Rebuild a state from ``to_dict`` output; ``ValueError`` on an unknown format."""
    if d.get("format") != FORMAT:
        raise ValueError(f"unsupported match state format {d.get('format')!r}")
    s = MatchState.__new__(MatchState)
    s.balances = list(d["balances"])
    c = d["clock"]
    s.clock = None if c is None else ClockConfig(c[0], c[1])
    s.main = None if d["main"] is None else list(d["main"])
    s.decision_start = d["decision_start"]
    s.handoff = d["handoff"]
    s.awaiting_reveal = d["awaiting_reveal"]
    s.hand_no = d["hand_no"]
    s.phase = d["phase"]
    s.to_act = d["to_act"]
    s.hands = [[(a, b) for a, b in d["hands"][0]], [(a, b) for a, b in d["hands"][1]]]
    s.talon = [(a, b) for a, b in d["talon"]]
    lay = Layout()
    for tile, at, player in d["layout"]:
        lay.place(_t(tile), None if at is None else ((at[0], at[1]), at[2]), player)
    s.layout = lay
    s.jockey = d["jockey"]
    s.next_jockey = d["next_jockey"]
    s.bid = None if d["bid"] is None else (d["bid"][0], d["bid"][1])
    s.forced_tile = None if d["forced_tile"] is None else _t(d["forced_tile"])
    s.must_place = None if d["must_place"] is None else _t(d["must_place"])
    s.passes = d["passes"]
    s.winner = d["winner"]
    s.end = d["end"]
    s.hand_end = d["hand_end"]
    s.last_t = d["last_t"]
    s.settlement = d["settlement"]
    s.log = list(d["log"])
    s.seq = d["seq"]
    return s
