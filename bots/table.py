"""The table of one hand as the computer player's search sees it (RULES §3, §4).

A playout places a tile a few thousand times per decision, so the player
keeps its own small model of the layout instead of ``engine.Layout``: only
what scoring and fitting depend on, the open positions as ``(value, kind)``
and the spinner. It is built from an ``engine.Layout`` (``Table.of``), so it
starts from the engine's reading of the rules; ``tests/bots/test_table.py``
checks it against the engine placement by placement.

Tiles are numbered 0..27 in ``engine.ALL_TILES`` order, and a set of tiles is
an ``int`` bit mask, so a hand, the tiles that fit and the tiles a player
cannot see are each one integer.

>>> t = Table.opening(INDEX[(1, 4)])
>>> t.total, t.score()
(5, 5)
>>> t = t.after(t.positions.index((1, END)), INDEX[(1, 1)])  # the spinner
>>> t.total, t.spinner
(6, 1)
"""

from __future__ import annotations

from engine import ALL_TILES, Tile
from engine.layout import BRANCH_A, BRANCH_B, Layout

N_TILES = len(ALL_TILES)
ALL_MASK = (1 << N_TILES) - 1
INDEX: dict[Tile, int] = {t: i for i, t in enumerate(ALL_TILES)}
LOW = [t[0] for t in ALL_TILES]
HIGH = [t[1] for t in ALL_TILES]
PIPS = [t[0] + t[1] for t in ALL_TILES]
BIT = [1 << i for i in range(N_TILES)]
# TILE_OF[v][x]: the index of [v|x] (either order).
TILE_OF = [[INDEX[(min(v, x), max(v, x))] for x in range(7)] for v in range(7)]
# HAS[v]: every tile with a half of value v.
HAS = [sum(BIT[i] for i, t in enumerate(ALL_TILES) if v in t) for v in range(7)]

# Kinds of open position, by what they add to the counted ends (RULES §4):
END = 0  # a non-double's open half: its value
DOUBLE_END = 1  # a terminal non-spinner double's straight_b: twice its value
BRANCH = 2  # an unstarted spinner branch: nothing
SPIN = 3  # an open straight side of the spinner: the spinner adds 2v while any is open

Position = tuple[int, int]  # (value, kind)
Option = tuple[int | None, int]  # a placement: (index in Table.positions, or None to open; tile)


def tiles_of(mask: int) -> list[int]:
    """The tile indices in ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(tiles: list[Tile] | list[list[int]]) -> int:
    """The mask of some tiles written ``[a, b]`` or ``(a, b)`` (either order)."""
    m = 0
    for t in tiles:
        m |= BIT[TILE_OF[t[0]][t[1]]]
    return m


def score_of(total: int) -> int:
    """What a placement leaving ``total`` on the counted ends scores (RULES §4)."""
    return total if total > 0 and total % 5 == 0 else 0


class Table:
    """The open positions, the spinner and the counted-ends total. Immutable."""

    __slots__ = ("positions", "spinner", "spin_open", "total", "empty")

    positions: list[Position]
    spinner: int  # the spinner's value, or -1 before the first double
    spin_open: int  # how many of the spinner's straight sides are open
    total: int
    empty: bool

    def __init__(
        self, positions: list[Position], spinner: int, spin_open: int, total: int, empty: bool
    ) -> None:
        self.positions = positions
        self.spinner = spinner
        self.spin_open = spin_open
        self.total = total
        self.empty = empty

    @classmethod
    def new(cls) -> Table:
        return cls([], -1, 0, 0, True)

    @classmethod
    def of(cls, lay: Layout) -> Table:
        """The model of ``lay``; ``positions[i]`` is ``lay.open_positions()[i]``."""
        if lay.empty:
            return cls.new()
        sp = -1 if lay.spinner is None else lay.spinner[0]
        positions: list[Position] = []
        spin_open = 0
        for tile, side, v in lay.open_positions():
            if tile[0] != tile[1]:
                kind = END
            elif tile != lay.spinner:
                kind = DOUBLE_END
            elif side in (BRANCH_A, BRANCH_B):
                kind = BRANCH
            else:
                kind = SPIN
                spin_open += 1
            positions.append((v, kind))
        return cls(positions, sp, spin_open, lay.end_total(), False)

    @classmethod
    def opening(cls, tile: int) -> Table:
        """The table after ``tile`` opens the hand."""
        a, b = LOW[tile], HIGH[tile]
        if a == b:
            return cls([(a, SPIN), (a, SPIN)], a, 2, 2 * a, False)
        return cls([(a, END), (b, END)], -1, 0, a + b, False)

    def open_mask(self) -> int:
        """Every tile that fits somewhere now."""
        m = 0
        for v, _ in self.positions:
            m |= HAS[v]
        return m

    def options(self, candidates: int) -> list[Option]:
        """Every distinct placement of a tile in ``candidates``.

        Placements on equal positions (same value, same kind) lead to equal
        tables, so only the first such position is offered.
        """
        if self.empty:
            return [(None, t) for t in tiles_of(candidates)]
        out: list[Option] = []
        seen: set[Position] = set()
        for i, pos in enumerate(self.positions):
            if pos not in seen:
                seen.add(pos)
                out.extend((i, t) for t in tiles_of(candidates & HAS[pos[0]]))
        return out

    def score(self) -> int:
        return score_of(self.total)

    def after(self, i: int, tile: int) -> Table:
        """The table once ``tile`` is placed on ``positions[i]`` (the caller checked it fits)."""
        v, kind = self.positions[i]
        a, b = LOW[tile], HIGH[tile]
        positions = self.positions[:i] + self.positions[i + 1 :]
        total = self.total
        spinner, spin_open = self.spinner, self.spin_open
        if kind == END:
            total -= v
        elif kind == DOUBLE_END:
            total -= 2 * v
        elif kind == SPIN:
            spin_open -= 1
            if spin_open == 0:
                # Both straight sides taken: the spinner stops counting, its branches open.
                total -= 2 * spinner
                positions += [(spinner, BRANCH), (spinner, BRANCH)]
        if a == b:
            total += 2 * a
            if spinner < 0:
                spinner, spin_open = a, 1
                positions.append((a, SPIN))
            else:
                positions.append((a, DOUBLE_END))
        else:
            other = b if a == v else a
            total += other
            positions.append((other, END))
        return Table(positions, spinner, spin_open, total, False)

    def place(self, i: int | None, tile: int) -> Table:
        """``after``, or ``opening`` when ``i`` is ``None``."""
        return Table.opening(tile) if i is None else self.after(i, tile)

    def best_reply(self, possible: int) -> tuple[int, int]:
        """The most the next placement could score with a tile in ``possible``, and how
        many tiles of ``possible`` score something at all.

        Only the totals matter, so for each open position just the one or two
        halves that would bring the total to a multiple of 5 are looked at.
        """
        best = 0
        scoring = 0
        seen: set[Position] = set()
        for pos in self.positions:
            if pos in seen:
                continue
            seen.add(pos)
            v, kind = pos
            base = self.total
            if kind == END:
                base -= v
            elif kind == DOUBLE_END:
                base -= 2 * v
            elif kind == SPIN and self.spin_open == 1:
                base -= 2 * self.spinner
            r = -base % 5
            for x in (r, r + 5):
                if x > 6 or x == v or base + x <= 0:
                    continue
                bit = BIT[TILE_OF[v][x]]
                if possible & bit:
                    scoring |= bit
                    best = max(best, base + x)
            # The double [v|v] adds 2v whether it becomes the spinner or a terminal double.
            d = base + 2 * v
            bit = BIT[TILE_OF[v][v]]
            if d > 0 and d % 5 == 0 and possible & bit:
                scoring |= bit
                best = max(best, d)
        return best, scoring.bit_count()
