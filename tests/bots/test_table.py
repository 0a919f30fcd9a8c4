"""The player's table model agrees with the engine's layout, placement by placement.

The player searches with ``bots.table.Table`` instead of ``engine.Layout`` for
speed; if the two ever disagreed about a total or a fitting end, the player
would chase points that do not exist.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from bots.table import BIT, INDEX, TILE_OF, Table, score_of, tiles_of
from engine.layout import Layout


def values(lay: Layout) -> list[int]:
    return sorted(v for _, _, v in lay.open_positions())


def brute_best_reply(lay: Layout, possible: int) -> tuple[int, int]:
    """By the engine: the most a tile in ``possible`` scores next, and how many tiles score."""
    best, scoring = 0, set()
    for t in tiles_of(possible):
        tile = engine.ALL_TILES[t]
        for pt, side, _ in lay.fits(tile):
            after = lay.copy()
            after.place(tile, (pt, side))
            points = score_of(after.end_total())
            if points:
                scoring.add(t)
                best = max(best, points)
    return best, len(scoring)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_model_counts_and_fits_like_the_engine_through_a_whole_layout(seed: int) -> None:
    rng = random.Random(seed)
    tiles = list(engine.ALL_TILES)
    rng.shuffle(tiles)
    lay = Layout()
    opening = tiles.pop()
    lay.place(opening, None)
    table = Table.opening(INDEX[opening])
    while True:
        assert table.total == lay.end_total()
        assert sorted(v for v, _ in table.positions) == values(lay)
        of = Table.of(lay)
        assert (of.total, of.spinner, of.spin_open) == (table.total, table.spinner, table.spin_open)
        assert sorted(of.positions) == sorted(table.positions)
        possible = sum(BIT[INDEX[t]] for t in tiles if rng.random() < 0.5)
        assert table.best_reply(possible) == brute_best_reply(lay, possible)
        moves = [(t, pos) for t in tiles for pos in lay.fits(t)]
        if not moves:
            break
        tile, (pt, side, _) = rng.choice(moves)
        # The model's position for the engine's (pt, side) is the same index in Table.of(lay).
        i = lay.open_positions().index((pt, side, lay.value_at(pt, side)))
        table = of.after(i, INDEX[tile])
        lay.place(tile, (pt, side))
        tiles.remove(tile)


def test_the_rules_page_examples_hold_in_the_model() -> None:
    # RULES §4's worked examples, by total after each placement.
    steps = [
        ((1, 4), None, 5),
        ((1, 1), ((1, 4), "low"), 6),
        ((4, 4), ((1, 4), "high"), 10),
        ((3, 4), ((4, 4), "straight_b"), 5),
        ((1, 2), ((1, 1), "straight_b"), 5),
        ((1, 5), ((1, 1), "branch_a"), 10),
        ((5, 5), ((1, 5), "high"), 15),
        ((0, 5), ((5, 5), "straight_b"), 5),
        ((1, 3), ((1, 1), "branch_b"), 8),
    ]
    lay = Layout()
    for tile, at, total in steps:
        before = Table.of(lay)
        i = None if at is None else lay.open_positions().index((*at, lay.value_at(*at)))
        after = before.place(i, INDEX[tile])
        lay.place(tile, at)
        assert after.total == total == lay.end_total()


def test_a_reply_that_scores_nothing_is_no_threat() -> None:
    # [3|6] then the spinner [6|6]: 15 on the table. Nothing the opponent could
    # hold of [0|0], [1|1] makes a multiple of 5.
    table = Table.opening(INDEX[(3, 6)]).after(1, INDEX[(6, 6)])
    assert table.total == 15
    assert table.best_reply(BIT[TILE_OF[0][0]] | BIT[TILE_OF[1][1]]) == (0, 0)
    # [2|6] on the spinner's open straight side: 3 + 2 = 5 (the spinner stops counting).
    assert table.best_reply(BIT[TILE_OF[2][6]]) == (5, 1)
