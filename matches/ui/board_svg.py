"""A layout drawn for reading: the rules page's figures and the replay's board.

The geometry is the live board's (``matches/board.py``); the input is an engine
``Layout`` rather than a seat's view, and nothing on it is tapped, so no
position is a button. ``templates/board/_board.html`` draws the result.

The numbers drawn come from the engine alone: ``counted_ends`` gives each
counted end's contribution and ``legal_positions`` the hollow dots (RULES §3, §4).
"""

from __future__ import annotations

from typing import Any

from engine.layout import Layout
from matches.ui.fragments import pips_svg, side_label, tile_label
from table import geometry as board

SCORE_STEP = 5  # a positive multiple of 5 moves that many points (RULES §4)


def view_parts(layout: Layout) -> dict[str, list[dict[str, Any]]]:
    """``layout``, ``legal`` and ``ends`` in the shapes of ``engine.view_for``."""
    return {
        "layout": [
            {
                "tile": list(p.tile),
                "at": None if p.at is None else {"tile": list(p.at[0]), "side": p.at[1]},
                "conn": p.conn,
                "player": p.player,
            }
            for p in layout.placed
        ],
        "legal": [
            {"tile": list(t), "side": side, "value": v} for t, side, v in layout.legal_positions()
        ],
        "ends": [{"tile": list(t), "value": v} for t, v in layout.counted_ends()],
    }


def scored(total: int) -> int:
    """The points a placement moves for an end total (before the payer's balance caps it)."""
    return total if total > 0 and total % SCORE_STEP == 0 else 0


def drawn(layout: Layout, *, mark_last: bool = True) -> dict[str, Any]:
    """The board of ``layout`` for ``templates/board/_board.html``.

    ``mark_last`` marks the last tile placed (the figure's or the step's placement).

    The geometry's keys, each tile with its ``label`` and ``pips_svg``, each
    position with its ``label``; ``ends`` (the counted ends in the engine's
    order), ``ends_sum`` (``"4 + 1"``), ``end_total`` and ``score``.
    """
    parts = view_parts(layout)
    g = board.geometry(parts["layout"], parts["legal"], parts["ends"])
    for t in g["tiles"]:
        t["label"] = tile_label(t["tile"])
        t["pips_svg"] = pips_svg(t["pips"], 2.4)
        t["last"] = t["last"] and mark_last
    for p in g["positions"]:
        p["label"] = f"{tile_label(p['tile'])} {side_label(p['side'])}"
    values = [e["value"] for e in parts["ends"]]
    g["ends"] = parts["ends"]
    g["ends_sum"] = " + ".join(str(v) for v in values) or "0"
    g["end_total"] = sum(values)
    g["score"] = scored(g["end_total"])
    return g
