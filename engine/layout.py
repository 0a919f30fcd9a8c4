"""The layout of one hand: positions, the spinner, counted ends (RULES §3, §4).

Positions are named by the tile that owns them and a side. A placed tile
remembers the position it is attached to and the side of its own that
connects; everything else (open positions, counted ends) follows from that.

>>> lay = Layout()
>>> lay.place((1, 4), None)
>>> lay.end_total()
5
>>> lay.place((1, 1), ((1, 4), "low"))
>>> lay.spinner, lay.end_total()
((1, 1), 6)
"""

from __future__ import annotations

from typing import NamedTuple

from .tiles import Tile

LOW, HIGH = "low", "high"
STRAIGHT_A, STRAIGHT_B = "straight_a", "straight_b"
BRANCH_A, BRANCH_B = "branch_a", "branch_b"
NON_DOUBLE_SIDES = (LOW, HIGH)
DOUBLE_SIDES = (STRAIGHT_A, STRAIGHT_B, BRANCH_A, BRANCH_B)
ALL_SIDES = NON_DOUBLE_SIDES + DOUBLE_SIDES

Position = tuple[Tile, str]


class Placed(NamedTuple):
    """One tile on the table: what it hangs on (``None`` for the opening tile),
    which of its own sides connects (``None`` for the opening tile) and who placed it."""

    tile: Tile
    at: Position | None
    conn: str | None
    player: int


def side_value(tile: Tile, side: str) -> int:
    """The pip value of a position."""
    return tile[0] if side == LOW else tile[1]


class Layout:
    """The tiles on the table in one hand, in the order they were placed.

    The open positions and counted ends are cached: every action and view asks
    for them, and only ``place`` changes them. Cached lists are never mutated,
    so copies share them.
    """

    __slots__ = ("placed", "spinner", "_occupied", "_legal", "_ends")

    def __init__(self) -> None:
        self.placed: list[Placed] = []
        self.spinner: Tile | None = None
        self._occupied: set[Position] = set()
        self._legal: list[tuple[Tile, str, int]] | None = None
        self._ends: list[tuple[Tile, int]] | None = None

    def copy(self) -> Layout:
        new = Layout.__new__(Layout)
        new.placed = list(self.placed)
        new.spinner = self.spinner
        new._occupied = set(self._occupied)
        new._legal = self._legal
        new._ends = self._ends
        return new

    @property
    def empty(self) -> bool:
        return not self.placed

    def _open_sides(self, p: Placed) -> list[str]:
        tile, occ = p.tile, self._occupied
        if tile[0] != tile[1]:
            return [s for s in NON_DOUBLE_SIDES if s != p.conn and (tile, s) not in occ]
        sides = [s for s in (STRAIGHT_A, STRAIGHT_B) if s != p.conn and (tile, s) not in occ]
        if tile == self.spinner and not sides:
            # The spinner branches only once both straight sides are taken (RULES §3).
            sides = [s for s in (BRANCH_A, BRANCH_B) if (tile, s) not in occ]
        return sides

    def _positions_of(self, p: Placed) -> list[tuple[Tile, str, int]]:
        t = p.tile
        return [(t, s, t[0] if s == LOW else t[1]) for s in self._open_sides(p)]

    def open_positions(self) -> list[tuple[Tile, str, int]]:
        """The cached open positions (never mutate the list)."""
        legal = self._legal
        if legal is None:
            legal = [pos for p in self.placed for pos in self._positions_of(p)]
            self._legal = legal
        return legal

    def legal_positions(self) -> list[tuple[Tile, str, int]]:
        """Every open position as ``(tile, side, value)``; empty before the opening tile."""
        return list(self.open_positions())

    def counted_ends(self) -> list[tuple[Tile, int]]:
        """The counted ends as ``(tile, value)`` (RULES §4)."""
        if self._ends is None:
            self._ends = self._count_ends()
        return list(self._ends)

    def _count_ends(self) -> list[tuple[Tile, int]]:
        out: list[tuple[Tile, int]] = []
        occ = self._occupied
        for p in self.placed:
            t = p.tile
            if t[0] != t[1]:
                for s in NON_DOUBLE_SIDES:
                    if s != p.conn and (t, s) not in occ:
                        out.append((t, t[0] if s == LOW else t[1]))
            elif t == self.spinner:
                a_open = p.conn != STRAIGHT_A and (t, STRAIGHT_A) not in occ
                if a_open or (t, STRAIGHT_B) not in occ:
                    out.append((t, 2 * t[0]))
            elif (t, STRAIGHT_B) not in occ:
                out.append((t, 2 * t[0]))
        return out

    def end_total(self) -> int:
        return sum(v for _, v in self.counted_ends())

    def value_at(self, tile: Tile, side: str) -> int | None:
        """The value of the open position ``(tile, side)``, or ``None`` if it is not open."""
        for t, s, v in self.open_positions():
            if t == tile and s == side:
                return v
        return None

    def fits(self, tile: Tile) -> list[tuple[Tile, str, int]]:
        """The open positions ``tile`` may be placed on."""
        a, b = tile
        return [pos for pos in self.open_positions() if pos[2] == a or pos[2] == b]

    def any_fit(self, hand: list[Tile]) -> bool:
        values = {v for _, _, v in self.open_positions()}
        return any(a in values or b in values for a, b in hand)

    def place(self, tile: Tile, at: Position | None, player: int = 0) -> None:
        """Put ``tile`` on ``at`` (``None`` for the opening tile).

        The caller has checked legality (see ``fits``); this only records it.
        """
        if at is None:
            conn = None
        else:
            value = side_value(at[0], at[1])
            # A double always connects by straight_a; a non-double by its matching half.
            conn = STRAIGHT_A if tile[0] == tile[1] else LOW if tile[0] == value else HIGH
            self._occupied.add(at)
            self._occupied.add((tile, conn))
        if tile[0] == tile[1] and self.spinner is None:
            self.spinner = tile
        placed = Placed(tile, at, conn, player)
        self.placed.append(placed)
        self._ends = None
        legal = self._legal
        if legal is None or (at is not None and at[0] == self.spinner):
            # Taking a spinner side may open its branches: recount from scratch.
            self._legal = None
        else:
            # Otherwise only ``at`` closes, and the new tile's sides open (it is
            # the last placed, so they come last, as a full recount lists them).
            new = [pos for pos in legal if pos[0] != at[0] or pos[1] != at[1]] if at else []
            new.extend(self._positions_of(placed))
            self._legal = new
