"""The rules page's figures and worked examples, every number computed by the engine.

The figures are the original rules page's (``shared/seed/``), which are also the
rows of RULES §4's table: each is a layout built with the engine's ``Layout``
from the placements listed here, and drawn by the live board's geometry
(``matches.ui.board_svg``). The auction and clock examples run a real engine
match; the block examples use the engine's own settlement arithmetic.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

import engine
from engine.layout import Layout, Position
from engine.match import JOCKEY_DISCOUNT, round_to_five
from engine.tiles import Tile, hand_pips
from matches.ui.board_svg import drawn
from matches.ui.text import side_label, tile_label, time_control

Placement = tuple[Tile, Position | None]

# The seed's long example: a spinner placed second, then both straight sides, then branches.
SPINNER_LINE: tuple[Placement, ...] = (
    ((1, 4), None),
    ((1, 1), ((1, 4), "low")),
    ((4, 4), ((1, 4), "high")),
    ((3, 4), ((4, 4), "straight_b")),
    ((1, 2), ((1, 1), "straight_b")),
    ((1, 5), ((1, 1), "branch_a")),
    ((5, 5), ((1, 5), "high")),
    ((0, 5), ((5, 5), "straight_b")),
    ((1, 3), ((1, 1), "branch_b")),
)

# Each section's figures in the seed's order, as the placements that build the layout
# (the last placement is the one the figure is about). "branches" also draws [5|5],
# a row of RULES §4 that the seed's figures skip.
FIGURES: dict[str, tuple[tuple[Placement, ...], ...]] = {
    "ends": (
        SPINNER_LINE[:1],
        SPINNER_LINE[:2],
        (((3, 6), None), ((6, 6), ((3, 6), "high"))),
        (((0, 0), None),),
    ),
    "doubles": (SPINNER_LINE[:3], SPINNER_LINE[:4], (((2, 2), None),)),
    "branches": tuple(SPINNER_LINE[:n] for n in range(5, 10)),
}

# Block examples of RULES §5 (4 vs 18, 4 vs 17, 6 vs 6): the two hands left at the block.
BLOCK_HANDS: tuple[tuple[tuple[Tile, ...], tuple[Tile, ...]], ...] = (
    (((0, 1), (0, 3)), ((3, 6), (4, 5))),
    (((0, 1), (0, 3)), ((3, 5), (4, 5))),
    (((1, 5),), ((2, 4),)),
)

# Decision times of the clock examples (RULES §7), in ms.
CLOCK_EXAMPLES_MS = (8_000, 13_000)

JOCKEY, OPPONENT = 0, 1  # seats in the auction and clock examples


def build_layout(placements: tuple[Placement, ...]) -> Layout:
    """The engine's layout after ``placements``; refuses one the rules would refuse."""
    lay = Layout()
    for tile, at in placements:
        if at is None:
            if not lay.empty:
                raise ValueError(f"{tile_label(tile)} is not the opening tile")
        elif lay.value_at(*at) not in tile:
            raise ValueError(f"{tile_label(tile)} does not fit {tile_label(at[0])} {at[1]}")
        lay.place(tile, at)
    return lay


def figure(placements: tuple[Placement, ...]) -> dict[str, Any]:
    """One figure: the board after ``placements`` and its caption."""
    tile, at = placements[-1]
    b = drawn(build_layout(placements))
    if at is None:
        placed = _("Placed tile: %(tile)s (the opening tile)") % {"tile": tile_label(tile)}
    else:
        placed = _("Placed tile: %(tile)s on %(on)s, %(side)s") % {
            "tile": tile_label(tile),
            "on": tile_label(at[0]),
            "side": side_label(at[1]),
        }
    return {
        "board": b,
        "placed": placed,
        "ends": _("Counted ends: %(sum)s = %(total)s")
        % {
            "sum": b["ends_sum"],
            "total": b["end_total"],
        },
        "moves": _("Points moved by the placement: %(score)s") % {"score": b["score"]},
    }


def figures() -> dict[str, list[dict[str, Any]]]:
    return {section: [figure(p) for p in chain] for section, chain in FIGURES.items()}


def _seat(seat: int) -> str:
    return _("The jockey") if seat == JOCKEY else _("The opponent")


def _auction_line(ev: engine.Event, first_bid: bool) -> str:
    who = _seat(ev["player"])
    kind = ev["type"]
    if kind == "decline":
        return _("%(who)s declines: the jockey opens, free.") % {"who": who}
    if kind == "bid":
        text = _("%(who)s bids %(amount)s.") if first_bid else _("%(who)s raises to %(amount)s.")
        return text % {"who": who, "amount": ev["amount"]}
    args = {"who": who, "amount": ev["amount"], "cost": ev["cost"], "discount": JOCKEY_DISCOUNT}
    if ev["payer"] == JOCKEY:
        return (
            _(
                "%(who)s accepts: the jockey pays %(amount)s − %(discount)s = %(cost)s "
                "and opens with any tile."
            )
            % args
        )
    return _("%(who)s accepts: the opponent pays %(cost)s and opens with any tile.") % args


# The auctions shown: (bids in order, then the closing action). Seat 0 went out last hand.
AUCTIONS: tuple[tuple[engine.Action, ...], ...] = (
    (
        engine.Action("bid", OPPONENT, amount=15),
        engine.Action("bid", JOCKEY, amount=20),
        engine.Action("accept", OPPONENT),
    ),
    (engine.Action("bid", OPPONENT, amount=15), engine.Action("accept", JOCKEY)),
    (engine.Action("decline", OPPONENT),),
)


def _example_match(clock: engine.ClockConfig | None) -> engine.MatchState:
    """A hand that opens with an auction, seat 0 the jockey, both balances 150."""
    return engine.new_match(
        engine.Deal.from_order(list(engine.ALL_TILES)), now_ms=0, clock=clock, jockey=JOCKEY
    )


def auction_examples() -> list[dict[str, Any]]:
    """Each auction of ``AUCTIONS`` as played by the engine: its title, and for each
    action a line and the balances after it."""
    titles = (
        _("The jockey's bid is accepted: the discount applies"),
        _("The opponent's bid is accepted: no discount"),
        _("The opponent declines"),
    )
    out = []
    for title, actions in zip(titles, AUCTIONS, strict=True):
        state = _example_match(None)
        lines = []
        for i, action in enumerate(actions):
            state, events = engine.apply(state, action, 0)
            lines.append(
                {
                    "text": _auction_line(events[0], first_bid=i == 0),
                    "jockey": state.balances[JOCKEY],
                    "opponent": state.balances[OPPONENT],
                }
            )
        out.append({"title": title, "lines": lines})
    return out


def block_examples() -> list[dict[str, Any]]:
    """RULES §5's block settlements, by the engine's pip count and rounding."""
    out = []
    for light, heavy in BLOCK_HANDS:
        pips = (hand_pips(light), hand_pips(heavy))
        owed = 0 if pips[0] == pips[1] else round_to_five(pips[1])
        out.append(
            {
                "hands": [[tile_label(t) for t in light], [tile_label(t) for t in heavy]],
                "pips": pips,
                "owed": owed,
            }
        )
    return out


def clock_examples() -> list[dict[str, Any]]:
    """Decisions of 8 s and 13 s as the engine's clock charges them.

    In a real auction the opponent bids after the first time and the jockey
    accepts after the second; each line gives the main time before and after.
    """
    from matches.conf import match_clock

    clock = match_clock()
    state = _example_match(clock)
    actions = (engine.Action("bid", OPPONENT, amount=15), engine.Action("accept", JOCKEY))
    now = 0
    out = []
    for took, action in zip(CLOCK_EXAMPLES_MS, actions, strict=True):
        seat = action.player
        assert state.main is not None
        before = state.main[seat]
        now += took
        state, _events = engine.apply(state, action, now)
        used = before - state.main[seat]
        delay = min(took, clock.delay_ms)
        out.append(
            {
                "took_s": took // 1000,
                "delay_s": delay // 1000,
                "used_s": used // 1000,
                "before_s": before // 1000,
                "after_s": state.main[seat] // 1000,
                # The bars share one scale: the longest decision is the full width.
                "delay_pct": round(100 * delay / max(CLOCK_EXAMPLES_MS)),
                "used_pct": round(100 * used / max(CLOCK_EXAMPLES_MS)),
            }
        )
    return out


def context() -> dict[str, Any]:
    """Everything the rules body (templates/rules/_rules.html) draws."""
    return {
        "figures": figures(),
        "auctions": auction_examples(),
        "blocks": block_examples(),
        "clock_examples": clock_examples(),
        "time_control": time_control(),
    }
