"""/rules/ in Chromium: every figure of the original rules page is an SVG board whose
drawn numbers are the engine's counted ends for that layout (RULES §4's table)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ui_pages import BOARD_DRAWN, browsing

from engine.layout import Layout

# RULES §4's worked examples: the layout after the placement | counted ends | points moved.
# "…" goes on from the row before it; the first "…" from row 2.
SCORING_TABLE = """
[1|4] opening | 5 | 5
[1|4] opening, [1|1] on [1|4] low | 6 | 0
[3|6] opening, [6|6] on [3|6] high | 15 | 15
[0|0] opening | 0 | 0
[2|2] opening | 4 | 0
… [4|4] on [1|4] high | 10 | 10
… [3|4] on [4|4] straight_b | 5 | 5
… [1|2] on [1|1] straight_b | 5 | 5
… [1|5] on [1|1] branch_a | 10 | 10
… [5|5] on [1|5] high | 15 | 15
… [0|5] on [5|5] straight_b | 5 | 5
… [1|3] on [1|1] branch_b | 8 | 0
"""
PLACEMENT = re.compile(r"\[(\d)\|(\d)\] (?:opening|on \[(\d)\|(\d)\] (\w+))")


def _rows() -> list[dict[str, Any]]:
    """Each row's layout built with the engine, placement by placement, and its numbers."""
    rows = []
    chain = Layout()
    for n, line in enumerate(SCORING_TABLE.strip().splitlines()):
        layout_text, total, moved = line.rsplit("|", 2)
        lay = chain if layout_text.startswith("…") else Layout()
        placed = None
        for text in layout_text.strip("… ").split(", "):
            m = PLACEMENT.fullmatch(text.strip())
            assert m, text
            placed = (int(m[1]), int(m[2]))
            at = None if m[3] is None else ((int(m[3]), int(m[4])), m[5])
            assert (at is None) == lay.empty and (at is None or lay.value_at(*at) in placed)
            lay.place(placed, at)
        if n == 1:
            chain = lay.copy()
        ends = [v for _t, v in lay.counted_ends()]
        assert sum(ends) == int(total)  # the engine agrees with the rules' table
        rows.append(
            {
                "tiles": {f"{a}-{b}" for a, b in (p.tile for p in lay.placed)},
                "placed": f"{placed[0]}-{placed[1]}" if placed else "",
                "numbers": Counter(str(v) for v in ends),
                "dots": len(lay.legal_positions()),
                "total": int(total),
                "moved": int(moved),
            }
        )
    return rows


def test_every_figure_draws_the_engines_counted_ends(browser: Any, live_server: Any) -> None:
    rows = _rows()
    for size in ("phone", "desktop"):
        with browsing(browser, live_server, size) as page:
            page.goto("/rules/")
            figures = page.locator("figure.rules-figure")
            assert figures.count() == len(rows) == 12
            matched = []
            for i in range(figures.count()):
                fig = figures.nth(i)
                assert fig.locator("svg.board__svg").is_visible()
                drawn = fig.evaluate(BOARD_DRAWN)
                row = next(r for r in rows if r["tiles"] == set(drawn["tiles"]))
                matched.append(rows.index(row))
                assert len(drawn["tiles"]) == len(row["tiles"])  # each tile drawn once
                assert drawn["last"] == [row["placed"]]
                # Filled numbers: exactly the engine's counted ends; a dot for every legal position.
                assert Counter(drawn["numbers"]) == row["numbers"]
                assert drawn["dots"] == row["dots"]
                caption = fig.locator("figcaption").inner_text()
                assert (
                    f"= {row['total']}" in caption
                    and f"この牌で移った得点：{row['moved']}点" in caption
                )
            assert sorted(matched) == list(range(12))  # every row of the table, once
