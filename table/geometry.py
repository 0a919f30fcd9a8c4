"""Where every tile and open position of a layout goes on screen (pure Python, no Django).

The layout of a hand is a tree (RULES §3): every tile hangs on one position of
an earlier tile. Only the spinner has more than two neighbours, so the tree is
a *spider*: the spinner (or, before any double, the opening tile) in the middle
and at most four simple lines ("legs") leaving it. We draw it that way:

- the centre tile sits at the origin; the spinner stands crosswise, so its
  straight sides (直線側A/B) lead left and right and its branches (枝A/B) up and down;
- each leg runs in its own part of the table and *snakes*: when the next tile
  would leave the table's width the line turns (a corner tile hangs off the last
  half), runs back, turns again, and so on. Rows are two squares apart.

::

    upper left:  leg W (straight A) folds upward     upper right: leg N (branch A)
    lower left:  leg S (branch B)                    lower right: leg E (straight B) folds downward

Legs W and E start on the middle row; legs N and S take one tile straight up
or down and then run sideways. The four regions never meet (the inner edges of
the snakes keep a one-square gap), so no two tiles overlap however the hand
goes, and the width is bounded: at most 2 × ``HALF_WIDTH`` squares (the view is
cut to what is drawn, evenly on both sides). Only the height grows.

Units: one *square* is one half of a domino. ``geometry()`` returns SVG user
units (``UNIT`` per square) ready for the template.

>>> g = geometry([{"tile": [1, 4], "at": None, "conn": None, "player": 0}],
...              legal=[{"tile": [1, 4], "side": "low", "value": 1},
...                     {"tile": [1, 4], "side": "high", "value": 4}],
...              ends=[{"tile": [1, 4], "value": 4}, {"tile": [1, 4], "value": 1}])
>>> [(p["key"], p["count"]) for p in g["positions"]]
[('1-4:low', 1), ('1-4:high', 4)]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

UNIT = 24  # SVG user units per square (half a domino)
HALF_WIDTH = 8.0  # squares from the centre to the left/right edge of the table
PAD = 0.6  # squares of margin around the drawing
MIN_HALF_HEIGHT = 2.0  # squares above and below the middle row, at least
MIN_HALF_SHOWN = 5.0  # squares shown left and right of the centre, at least

Tile = tuple[int, int]
Pos = tuple[Tile, str]
Vec = tuple[float, float]

E, W, N, S = (1.0, 0.0), (-1.0, 0.0), (0.0, -1.0), (0.0, 1.0)

# Where each leg leaves the centre tile and how it snakes. ``out``/``back`` are the
# row headings, ``fold`` the way it turns; ``out_limit`` bounds the outward rows
# (the table edge), ``back_limit`` the returning rows (the gap to the next region).
_LEGS: dict[str, dict[str, Any]] = {
    "W": {"head": W, "stub": 0, "out": W, "fold": N, "back": E, "out_limit": -HALF_WIDTH,
          "back_limit": -2.0},
    "E": {"head": E, "stub": 0, "out": E, "fold": S, "back": W, "out_limit": HALF_WIDTH,
          "back_limit": 2.0},
    "N": {"head": N, "stub": 1, "out": E, "fold": N, "back": W, "out_limit": HALF_WIDTH,
          "back_limit": -1.0},
    "S": {"head": S, "stub": 1, "out": W, "fold": S, "back": E, "out_limit": -HALF_WIDTH,
          "back_limit": 1.0},
}  # fmt: skip

# Pip offsets in a unit square, as fractions of the square (two layouts for six).
_D = 0.26
_PIPS: dict[int, list[Vec]] = {
    0: [],
    1: [(0, 0)],
    2: [(-_D, -_D), (_D, _D)],
    3: [(-_D, -_D), (0, 0), (_D, _D)],
    4: [(-_D, -_D), (_D, -_D), (-_D, _D), (_D, _D)],
    5: [(-_D, -_D), (_D, -_D), (0, 0), (-_D, _D), (_D, _D)],
    6: [(-_D, -_D), (0, -_D), (_D, -_D), (-_D, _D), (0, _D), (_D, _D)],
}


def pip_offsets(value: int, vertical: bool) -> list[Vec]:
    """Pip centres of one half, relative to its centre, in squares.

    A six runs along the tile's long side: in columns on a standing tile.
    """
    pts = _PIPS[value]
    if vertical and value == 6:
        return [(y, x) for x, y in pts]
    return list(pts)


def _t(x: Any) -> Tile:
    return (int(x[0]), int(x[1]))


def side_value(tile: Tile, side: str) -> int:
    return tile[0] if side == "low" else tile[1]


def _other_side(tile: Tile, side: str | None) -> str:
    """The side a line leaves a tile by, given the side it entered by."""
    if tile[0] != tile[1]:
        return "high" if side == "low" else "low"
    return "straight_b" if side == "straight_a" else "straight_a"


@dataclass
class LegTile:
    """A tile on a leg, walked outward: entered by ``near`` (the centre's side), left by ``far``."""

    tile: Tile
    near: str
    far: str


@dataclass
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box, gap: float = 0.0) -> bool:
        """True if the two boxes come closer than ``gap`` (touching at ``gap=0`` is no overlap)."""
        return (
            self.x0 < other.x1 + gap
            and other.x0 < self.x1 + gap
            and self.y0 < other.y1 + gap
            and other.y0 < self.y1 + gap
        )


@dataclass
class Drawn:
    """One tile on screen, in squares: its box and the centres and values of its two halves."""

    tile: Tile
    box: Box
    halves: list[tuple[float, float, int]]
    vertical: bool
    spinner: bool = False
    player: int | None = None


def _add(p: Vec, q: Vec, k: float = 1.0) -> Vec:
    return (p[0] + k * q[0], p[1] + k * q[1])


def _perp(h: Vec) -> Vec:
    return (-h[1], h[0])


def _square_box(c1: Vec, c2: Vec) -> Box:
    return Box(
        min(c1[0], c2[0]) - 0.5,
        min(c1[1], c2[1]) - 0.5,
        max(c1[0], c2[0]) + 0.5,
        max(c1[1], c2[1]) + 0.5,
    )


class _Turtle:
    """Lays one leg out: straight on, or a corner when the row is full."""

    def __init__(self, anchor: Vec, spec: dict[str, Any], placed: list[Drawn]) -> None:
        self.p = anchor  # midpoint of the open face the next tile touches
        self.h: Vec = spec["head"]
        self.spec = spec
        self.placed = placed  # every tile drawn so far (all legs): crosswise doubles avoid them
        self.prev_cross = False
        self.stub_left = spec["stub"]
        self.phase = "stub" if self.stub_left else "out"
        self.count = 0  # tiles this leg has placed

    def _within(self, box: Box, heading: Vec, limit: float) -> bool:
        return box.x1 <= limit + 1e-9 if heading[0] > 0 else box.x0 >= limit - 1e-9

    def _straight(self, cross: bool) -> tuple[list[Vec], Box, Vec]:
        p, h = self.p, self.h
        if cross:
            c = _add(p, h, 0.5)
            q = _perp(h)
            c1, c2 = _add(c, q, -0.5), _add(c, q, 0.5)
            return [c1, c2], _square_box(c1, c2), _add(p, h, 1.0)
        c1, c2 = _add(p, h, 0.5), _add(p, h, 1.5)
        return [c1, c2], _square_box(c1, c2), _add(p, h, 2.0)

    def _turn(self, h2: Vec) -> tuple[list[Vec], Box, Vec]:
        # The new tile's first half sits beside the previous tile's last half.
        e = _add(self.p, self.h, -0.5)
        if self.prev_cross:
            e = _add(e, h2, 0.5)
        c1, c2 = _add(e, h2, 1.0), _add(e, h2, 2.0)
        return [c1, c2], _square_box(c1, c2), _add(c2, h2, 0.5)

    def _clear(self, box: Box) -> bool:
        # A crosswise double sticks out half a square on each side of its row; keep it
        # half a square away from everything but the tile it touches.
        touching = self.placed[-1] if self.count else self.placed[0]
        return not any(box.overlaps(d.box, gap=0.45) for d in self.placed if d is not touching)

    def step(self, is_double: bool) -> tuple[list[Vec], Box, bool]:
        """Place the next tile; return its half centres (near first), box and crosswise flag."""
        spec = self.spec
        cross = False
        if self.phase == "stub":
            squares, box, nxt = self._straight(False)
            self.stub_left -= 1
            if self.stub_left == 0:
                self.phase = "to_out"
        elif self.phase in ("to_out", "to_back"):
            h2 = spec["out"] if self.phase == "to_out" else spec["back"]
            squares, box, nxt = self._turn(h2)
            self.h = h2
            self.phase = "out" if self.phase == "to_out" else "back"
        else:
            limit = spec["out_limit"] if self.phase == "out" else spec["back_limit"]
            placed = None
            if is_double:
                sq, bx, nx = self._straight(True)
                if self._within(bx, self.h, limit) and self._clear(bx):
                    placed, cross = (sq, bx, nx), True
            if placed is None:
                sq, bx, nx = self._straight(False)
                if self._within(bx, self.h, limit):
                    placed = (sq, bx, nx)
            if placed is None:
                squares, box, nxt = self._turn(spec["fold"])
                self.h = spec["fold"]
                self.phase = "to_back" if self.phase == "out" else "to_out"
            else:
                squares, box, nxt = placed
        self.p = nxt
        self.prev_cross = cross
        self.count += 1
        return squares, box, cross

    def peek(self) -> Vec:
        """Where the first half of a next (non-double) tile would go: the open position's dot."""
        saved = (self.p, self.h, self.prev_cross, self.stub_left, self.phase, self.count)
        squares, _, _ = self.step(False)
        self.p, self.h, self.prev_cross, self.stub_left, self.phase, self.count = saved
        return squares[0]


def legs_of(layout: list[dict[str, Any]]) -> tuple[Tile, dict[str, list[LegTile]], dict[str, Pos]]:
    """Split a layout into its centre tile and legs W, E, N, S.

    Returns the centre, each leg's tiles from the centre outward, and the position
    at each leg's far end (open or not). The centre is the spinner if there is one.
    """
    placed = {_t(e["tile"]): e for e in layout}
    child: dict[Pos, Tile] = {}
    for e in layout:
        if e["at"] is not None:
            child[(_t(e["at"]["tile"]), e["at"]["side"])] = _t(e["tile"])
    root = _t(layout[0]["tile"])
    spinner = next((t for t in placed if t[0] == t[1]), None)
    centre = spinner if spinner is not None else root

    def down(tile: Tile, side: str) -> tuple[list[LegTile], Pos]:
        out: list[LegTile] = []
        while (tile, side) in child:
            c = child[(tile, side)]
            conn = placed[c]["conn"]
            far = _other_side(c, conn)
            out.append(LegTile(c, conn, far))
            tile, side = c, far
        return out, (tile, side)

    legs: dict[str, list[LegTile]] = {}
    ends: dict[str, Pos] = {}
    if centre[0] != centre[1]:
        legs["W"], ends["W"] = down(centre, "low")
        legs["E"], ends["E"] = down(centre, "high")
        return centre, legs, ends
    legs["E"], ends["E"] = down(centre, "straight_b")
    legs["N"], ends["N"] = down(centre, "branch_a")
    legs["S"], ends["S"] = down(centre, "branch_b")
    if placed[centre]["at"] is None:
        legs["W"], ends["W"] = down(centre, "straight_a")
        return centre, legs, ends
    # The spinner came later: walk back up to the opening tile, then down its other side.
    # Every tile on the way up came before the spinner, so none is a double.
    up: list[LegTile] = []
    cur = placed[centre]
    end: Pos
    while True:
        ptile, pside = _t(cur["at"]["tile"]), cur["at"]["side"]
        parent = placed[ptile]
        if parent["at"] is None:
            far = _other_side(ptile, pside)
            up.append(LegTile(ptile, pside, far))
            rest, end = down(ptile, far)
            up.extend(rest)
            break
        up.append(LegTile(ptile, pside, parent["conn"]))
        cur = parent
    legs["W"], ends["W"] = up, end
    return centre, legs, ends


def layout_squares(
    layout: list[dict[str, Any]],
) -> tuple[list[Drawn], dict[Pos, Vec]]:
    """Every tile's box in squares, and the dot of each leg's far-end position."""
    if not layout:
        return [], {}
    players = {_t(e["tile"]): e.get("player") for e in layout}
    centre, legs, ends = legs_of(layout)
    drawn: list[Drawn] = []
    is_spinner = centre[0] == centre[1]
    if is_spinner:
        v = centre[0]
        drawn.append(Drawn(centre, Box(-0.5, -1, 0.5, 1), [(0, -0.5, v), (0, 0.5, v)], True, True))
        anchors = {"W": (-0.5, 0.0), "E": (0.5, 0.0), "N": (0.0, -1.0), "S": (0.0, 1.0)}
    else:
        lo, hi = centre
        drawn.append(Drawn(centre, Box(-1, -0.5, 1, 0.5), [(-0.5, 0, lo), (0.5, 0, hi)], False))
        anchors = {"W": (-1.0, 0.0), "E": (1.0, 0.0)}
    drawn[0].player = players.get(centre)
    dots: dict[Pos, Vec] = {}
    centre_sides = {
        "W": "straight_a" if is_spinner else "low",
        "E": "straight_b" if is_spinner else "high",
        "N": "branch_a",
        "S": "branch_b",
    }
    for name in ("W", "E", "N", "S"):
        if name not in legs:
            continue
        turtle = _Turtle(anchors[name], _LEGS[name], drawn)
        for lt in legs[name]:
            dbl = lt.tile[0] == lt.tile[1]
            squares, box, cross = turtle.step(dbl)
            near_v = side_value(lt.tile, lt.near)
            far_v = side_value(lt.tile, lt.far)
            vertical = (box.y1 - box.y0) > (box.x1 - box.x0)
            drawn.append(
                Drawn(
                    lt.tile,
                    box,
                    [(*squares[0], near_v), (*squares[1], far_v)],
                    vertical,
                    player=players.get(lt.tile),
                )
            )
        end = ends[name] if legs[name] else (centre, centre_sides[name])
        dots[end] = turtle.peek()
    return drawn, dots


def _key(tile: Tile) -> str:
    return f"{tile[0]}-{tile[1]}"


def pos_key(tile: Any, side: str) -> str:
    """The stable name of a position, as used in ``data-pos``: ``"4-4:straight_b"``."""
    return f"{int(tile[0])}-{int(tile[1])}:{side}"


def _counts(
    legal: list[dict[str, Any]], ends: list[dict[str, Any]], spinner: Tile | None
) -> dict[Pos, int]:
    """Which legal position shows each counted end's contribution (RULES §4)."""
    by_tile: dict[Tile, list[str]] = {}
    for p in legal:
        by_tile.setdefault(_t(p["tile"]), []).append(p["side"])
    out: dict[Pos, int] = {}
    for e in ends:
        t, value = _t(e["tile"]), int(e["value"])
        sides = by_tile.get(t, [])
        if t[0] != t[1]:
            side = next((s for s in sides if side_value(t, s) == value and (t, s) not in out), None)
        else:
            # A double's 2v shows once: at straight B if open, else straight A.
            side = next((s for s in ("straight_b", "straight_a") if s in sides), None)
        if side is not None:
            out[(t, side)] = value
    return out


def geometry(
    layout: list[dict[str, Any]],
    legal: list[dict[str, Any]] | None = None,
    ends: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The board as SVG user units: ``view_box``, ``width``, ``height``, ``tiles``, ``positions``.

    ``layout``, ``legal`` and ``ends`` are the view's keys of the same names. Each
    tile has its box, divider line and pips; each legal position has its dot and,
    if it is a counted end, the value it contributes (``count``).
    """
    legal = legal or []
    ends = ends or []
    drawn, dots = layout_squares(layout)
    spinner = next((d.tile for d in drawn if d.spinner), None)
    counts = _counts(legal, ends, spinner)
    last = _t(layout[-1]["tile"]) if layout else None
    u = UNIT

    tiles = []
    for d in drawn:
        b = d.box
        pips = list(_pips(tuple(d.halves), d.vertical))
        (ax, ay, _), (bx, by, _) = d.halves
        mx, my = (ax + bx) / 2, (ay + by) / 2
        if d.vertical:
            line = (b.x0 + 0.15, my, b.x1 - 0.15, my)
        else:
            line = (mx, b.y0 + 0.15, mx, b.y1 - 0.15)
        tiles.append(
            {
                "tile": list(d.tile),
                "key": _key(d.tile),
                "x": _r(b.x0 * u),
                "y": _r(b.y0 * u),
                "w": _r((b.x1 - b.x0) * u),
                "h": _r((b.y1 - b.y0) * u),
                "line": tuple(_r(c * u) for c in line),
                "pips": pips,
                "halves": [h[2] for h in d.halves],
                "spinner": d.spinner,
                "last": d.tile == last,
                "player": d.player,
                "vertical": d.vertical,
            }
        )

    positions = []
    for p in legal:
        t, side = _t(p["tile"]), p["side"]
        c = dots.get((t, side))
        if c is None:  # cannot happen for a layout the engine built; draw it on its tile
            c = next(((d.box.x0 + d.box.x1) / 2, (d.box.y0 + d.box.y1) / 2) for d in drawn
                     if d.tile == t)  # fmt: skip
        positions.append(
            {
                "tile": list(t),
                "side": side,
                "value": int(p["value"]),
                "key": pos_key(t, side),
                "count": counts.get((t, side)),
                "cx": _r(c[0] * u),
                "cy": _r(c[1] * u),
            }
        )

    # The view is cut to what is drawn, left and right alike so the centre tile stays
    # in the middle: a small layout shows big tiles, a wide one at most the table's width.
    half = MIN_HALF_SHOWN
    y0, y1 = -MIN_HALF_HEIGHT, MIN_HALF_HEIGHT
    for d in drawn:
        half = max(half, -d.box.x0 + PAD, d.box.x1 + PAD)
        y0, y1 = min(y0, d.box.y0 - PAD), max(y1, d.box.y1 + PAD)
    for c in dots.values():
        half = max(half, -c[0] + 0.5 + PAD, c[0] + 0.5 + PAD)
        y0, y1 = min(y0, c[1] - 0.5 - PAD), max(y1, c[1] + 0.5 + PAD)
    x0, x1 = -half, half
    return {
        "view_box": f"{_r(x0 * u)} {_r(y0 * u)} {_r((x1 - x0) * u)} {_r((y1 - y0) * u)}",
        "width": _r((x1 - x0) * u),
        "height": _r((y1 - y0) * u),
        "bounds": (x0, y0, x1, y1),
        "tiles": tiles,
        "positions": positions,
        "unit": u,
    }


@functools.lru_cache(maxsize=4096)
def _pips(halves: tuple[tuple[float, float, int], ...], vertical: bool) -> tuple[Vec, ...]:
    """A tile's pips in user units (a tile keeps its place as the layout grows: cached)."""
    u = UNIT
    return tuple(
        (_r((cx + ox) * u), _r((cy + oy) * u))
        for cx, cy, v in halves
        for ox, oy in pip_offsets(v, vertical)
    )


def _r(x: float) -> float | int:
    """Round to 0.1 user units; whole numbers print without ``.0``."""
    v = round(x, 1)
    return int(v) if v == int(v) else v
