"""A match state as a JSON-compatible dict and back, exactly.

``from_dict(to_dict(s)) == s`` and ``to_dict(from_dict(d)) == d`` for every
state the engine produces. ``FORMAT`` is bumped whenever the shape changes;
an unknown format is refused rather than misread.

>>> import json
>>> from .match import ALL_TILES, Deal, new_match
>>> s = new_match(Deal.from_order(list(ALL_TILES)))
>>> d = to_dict(s)
>>> from_dict(json.loads(json.dumps(d))) == s, d["format"], d["hands"][1][-2:]
(True, 2, '22')
"""

from __future__ import annotations

from typing import Any

from .layout import Layout
from .match import ClockConfig, MatchState
from .tiles import ALL_TILES, Tile

FORMAT = 2

# Tiles are stored as two digits ("14" is [1|4]) and a list of tiles as one
# string of them: the state is written on every move, and JSON handles one
# short string far faster than a list of two-number lists.
_TILE = {f"{a}{b}": (a, b) for a, b in ALL_TILES}
_SIDE = {
    "low": "l",
    "high": "h",
    "straight_a": "A",
    "straight_b": "B",
    "branch_a": "a",
    "branch_b": "b",
}
_SIDE_NAME = {v: k for k, v in _SIDE.items()}


def _tiles(ts: list[Tile]) -> str:
    return "".join([f"{a}{b}" for a, b in ts])


def _untiles(text: str) -> list[Tile]:
    return [_TILE[text[i : i + 2]] for i in range(0, len(text), 2)]


def _layout(lay: Layout) -> str:
    # Six characters a placed tile: the tile, what it hangs on ("..." for the
    # opening tile: tile and side), and who placed it.
    return "".join(
        [
            f"{p.tile[0]}{p.tile[1]}"
            + ("..." if p.at is None else f"{p.at[0][0]}{p.at[0][1]}{_SIDE[p.at[1]]}")
            + str(p.player)
            for p in lay.placed
        ]
    )


def _unlayout(text: str) -> Layout:
    lay = Layout()
    for i in range(0, len(text), 6):
        at = text[i + 2 : i + 5]
        lay.place(
            _TILE[text[i : i + 2]],
            None if at == "..." else (_TILE[at[:2]], _SIDE_NAME[at[2]]),
            int(text[i + 5]),
        )
    return lay


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
        "hands": [_tiles(s.hands[0]), _tiles(s.hands[1])],
        "talon": _tiles(s.talon),
        "layout": _layout(s.layout),
        "jockey": s.jockey,
        "next_jockey": s.next_jockey,
        "bid": None if s.bid is None else [s.bid[0], s.bid[1]],
        "forced_tile": None if s.forced_tile is None else _tiles([s.forced_tile]),
        "must_place": None if s.must_place is None else _tiles([s.must_place]),
        "passes": s.passes,
        "winner": s.winner,
        "end": s.end,
        "hand_end": s.hand_end,
        "last_t": s.last_t,
        "settlement": s.settlement,
        "log": list(s.log_json()),
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
    s.hands = [_untiles(d["hands"][0]), _untiles(d["hands"][1])]
    s.talon = _untiles(d["talon"])
    s.layout = _unlayout(d["layout"])
    s.jockey = d["jockey"]
    s.next_jockey = d["next_jockey"]
    s.bid = None if d["bid"] is None else (d["bid"][0], d["bid"][1])
    s.forced_tile = None if d["forced_tile"] is None else _TILE[d["forced_tile"]]
    s.must_place = None if d["must_place"] is None else _TILE[d["must_place"]]
    s.passes = d["passes"]
    s.winner = d["winner"]
    s.end = d["end"]
    s.hand_end = d["hand_end"]
    s.last_t = d["last_t"]
    s.settlement = d["settlement"]
    s._log = None  # decoded when a view first asks (MatchState.log)
    s._log_json = list(d["log"])
    s.seq = d["seq"]
    return s
