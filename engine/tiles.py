"""Tiles of the double-six set (RULES §2).

A tile is a tuple ``(low, high)`` with ``0 <= low <= high <= 6``.

>>> normalize((4, 1))
(1, 4)
>>> len(ALL_TILES)
28
>>> pips((2, 6))
8
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Tile = tuple[int, int]

ALL_TILES: tuple[Tile, ...] = tuple((a, b) for a in range(7) for b in range(a, 7))
_ALL = frozenset(ALL_TILES)


def normalize(tile: Sequence[int]) -> Tile:
    """Return ``tile`` written low half first; raise ``ValueError`` if it is no domino."""
    if len(tile) != 2:
        raise ValueError("a tile has two halves")
    a, b = tile[0], tile[1]
    if type(a) is not int or type(b) is not int:
        raise ValueError("tile halves are integers")
    t = (a, b) if a <= b else (b, a)
    if t not in _ALL:
        raise ValueError("tile halves are 0..6")
    return t


def is_double(tile: Tile) -> bool:
    """True for ``[v|v]``."""
    return tile[0] == tile[1]


def pips(tile: Tile) -> int:
    """The tile's pip sum."""
    return tile[0] + tile[1]


def hand_pips(hand: Iterable[Tile]) -> int:
    """The pip total of a hand (RULES §5, block)."""
    return sum(a + b for a, b in hand)


def opening_rank(tile: Tile) -> tuple[int, int, int]:
    """Sort key for the forced opening (RULES §2): doubles first, then pip sum, then higher half.

    >>> max([(2, 6), (3, 5)], key=opening_rank)
    (2, 6)
    >>> max([(0, 0), (5, 6)], key=opening_rank)
    (0, 0)
    """
    return (1 if tile[0] == tile[1] else 0, tile[0] + tile[1], tile[1])
