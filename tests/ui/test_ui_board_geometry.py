"""The board's geometry (table/geometry.py) over many random legal layouts.

Layouts come from the real engine: seeded matches played with random legal actions.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from ui_scenarios import layout_dicts, random_match

import engine
from table import geometry as board

# A layout grows one tile per placement; every state of these matches is checked.
SEEDS = range(40)


def _layouts() -> list[dict[str, Any]]:
    seen = []
    for seed in SEEDS:
        jockey = (None, 0, 1)[seed % 3]
        for s, now in random_match(seed, jockey=jockey):
            if s.layout.placed:
                v = engine.view_for(s, 0, now)
                seen.append({"layout": v["layout"], "legal": v["legal"], "ends": v["ends"]})
    return seen


@pytest.fixture(scope="module")
def layouts() -> list[dict[str, Any]]:
    return _layouts()


def touching(a: board.Box, b: board.Box) -> bool:
    """The closed boxes meet along an edge but share no area."""
    return (
        not a.overlaps(b)
        and a.x0 <= b.x1 + 1e-9
        and b.x0 <= a.x1 + 1e-9
        and a.y0 <= b.y1 + 1e-9
        and b.y0 <= a.y1 + 1e-9
    )


def distance(half: tuple[float, float, int], b: board.Box) -> float:
    dx = max(b.x0 - half[0], 0, half[0] - b.x1)
    dy = max(b.y0 - half[1], 0, half[1] - b.y1)
    return float(dx * dx + dy * dy)


def test_it_checks_many_layouts_including_long_ones(layouts: list[dict[str, Any]]) -> None:
    assert len(layouts) > 1500
    assert max(len(x["layout"]) for x in layouts) >= 20


def test_no_two_tiles_overlap(layouts: list[dict[str, Any]]) -> None:
    for x in layouts:
        drawn, _ = board.layout_squares(x["layout"])
        assert len(drawn) == len(x["layout"])
        for a, b in itertools.combinations(drawn, 2):
            assert not a.box.overlaps(b.box), (x["layout"], a, b)


def test_each_tile_touches_the_tile_it_hangs_on_with_matching_halves(
    layouts: list[dict[str, Any]],
) -> None:
    for x in layouts[::7]:
        drawn, _ = board.layout_squares(x["layout"])
        where = {d.tile: d for d in drawn}
        for e in x["layout"]:
            if e["at"] is None:
                continue
            child, parent = where[tuple(e["tile"])], where[tuple(e["at"]["tile"])]
            assert touching(child.box, parent.box), (e, child.box, parent.box)
            value = board.side_value(tuple(e["at"]["tile"]), e["at"]["side"])
            # The half drawn nearest the parent is the one that connects.
            near = min(child.halves, key=lambda h: distance(h, parent.box))
            assert near[2] == value, (e, child, parent)


def test_every_legal_position_gets_a_dot_clear_of_every_tile(layouts: list[dict[str, Any]]) -> None:
    for x in layouts:
        drawn, dots = board.layout_squares(x["layout"])
        for p in x["legal"]:
            c = dots[(tuple(p["tile"]), p["side"])]
            for d in drawn:
                b = d.box
                assert not (b.x0 < c[0] < b.x1 and b.y0 < c[1] < b.y1), (p, d)
        points = [dots[(tuple(p["tile"]), p["side"])] for p in x["legal"]]
        for a, b in itertools.combinations(points, 2):
            assert abs(a[0] - b[0]) + abs(a[1] - b[1]) >= 1, x["legal"]


def test_the_drawing_fits_a_bounded_box(layouts: list[dict[str, Any]]) -> None:
    limit = board.HALF_WIDTH
    tallest = 0.0
    for x in layouts:
        g = board.geometry(x["layout"], x["legal"], x["ends"])
        x0, y0, x1, y1 = g["bounds"]
        assert -limit - board.PAD - 1e-9 <= x0 and x1 <= limit + board.PAD + 1e-9
        tallest = max(tallest, y1 - y0)
        assert len(g["positions"]) == len(x["legal"])
        assert len(g["tiles"]) == len(x["layout"])
    # 28 tiles at most: a generous bound that still catches a line running away.
    assert tallest <= 40


def test_each_counted_end_shows_its_value_once(layouts: list[dict[str, Any]]) -> None:
    for x in layouts[::5]:
        g = board.geometry(x["layout"], x["legal"], x["ends"])
        shown = sorted(p["count"] for p in g["positions"] if p["count"] is not None)
        assert shown == sorted(e["value"] for e in x["ends"])


def test_spinner_straight_sides_go_left_and_right_and_branches_up_and_down() -> None:
    # The rules page's figure: [1|4], [1|1] (spinner) on its low end, [4|4], [3|4], [1|2],
    # [1|5] on branch A, [5|5], [0|5], [1|3] on branch B.
    from rules.examples import SPINNER_LINE

    layout, lay = layout_dicts(list(SPINNER_LINE))
    drawn, dots = board.layout_squares(layout)
    where = {d.tile: d.box for d in drawn}
    spinner = where[(1, 1)]
    assert (spinner.x0, spinner.x1, spinner.y0, spinner.y1) == (-0.5, 0.5, -1, 1)
    assert where[(1, 4)].x1 <= spinner.x0  # straight side A (towards the opening tile): left
    assert where[(1, 2)].x0 >= spinner.x1  # straight side B: right
    assert where[(1, 5)].y1 <= spinner.y0  # branch A: up
    assert where[(1, 3)].y0 >= spinner.y1  # branch B: down
    legal = [{"tile": list(t), "side": side, "value": v} for t, side, v in lay.legal_positions()]
    ends = [{"tile": list(t), "value": v} for t, v in lay.counted_ends()]
    g = board.geometry(layout, legal, ends)
    counts = {p["key"]: p["count"] for p in g["positions"]}
    assert counts == {"0-5:low": 0, "1-2:high": 2, "1-3:high": 3, "3-4:low": 3}
    spin = next(t for t in g["tiles"] if t["spinner"])
    assert spin["key"] == "1-1"


@pytest.mark.parametrize(
    ("placements", "counts"),
    [
        ([((1, 4), None)], {"1-4:low": 1, "1-4:high": 4}),
        ([((0, 0), None)], {"0-0:straight_a": None, "0-0:straight_b": 0}),
        ([((2, 2), None)], {"2-2:straight_a": None, "2-2:straight_b": 4}),
        ([((3, 6), None), ((6, 6), ((3, 6), "high"))], {"3-6:low": 3, "6-6:straight_b": 12}),
    ],
)
def test_the_rules_page_openings(placements: list[Any], counts: dict[str, Any]) -> None:
    layout, lay = layout_dicts(placements)
    legal = [{"tile": list(t), "side": side, "value": v} for t, side, v in lay.legal_positions()]
    ends = [{"tile": list(t), "value": v} for t, v in lay.counted_ends()]
    g = board.geometry(layout, legal, ends)
    assert {p["key"]: p["count"] for p in g["positions"]} == counts


def test_an_empty_layout_draws_nothing() -> None:
    g = board.geometry([], [], [])
    assert g["tiles"] == [] and g["positions"] == []
