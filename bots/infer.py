"""What a seat can infer about the opponent's hand, and worlds sampled from it.

The tiles a seat cannot see (28 minus its hand minus the layout) lie in the
opponent's hand or the talon. The seat's events of this hand narrow that:

- when the opponent drew or passed, none of the tiles it then held fitted the
  open end values (RULES §5); the tiles it drew without placing them did not
  fit either;
- a forced opening was the highest dealt tile (RULES §2), so no dealt tile
  ranks above it: the opponent was dealt none of those.

Each of the opponent's tiles is a *slot* with a mask of tiles it cannot be.
A slot collects every constraint from the moment the tile came to the hand,
so an older slot's mask contains a younger one's. When the opponent places a
tile from its hand we do not know which slot it left; taking the oldest one
that could have held it leaves the others as free as any history allows.
Because the masks are nested, filling the most constrained slots first
never gets stuck when any consistent deal exists.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from engine import ALL_TILES
from engine.layout import Layout
from engine.tiles import normalize, opening_rank

from .table import ALL_MASK, BIT, HAS, INDEX, mask_of, tiles_of

# _RANKED_ABOVE[t]: the tiles a forced opening with tile t proves nobody was dealt.
_RANKED_ABOVE = [
    sum(BIT[j] for j, u in enumerate(ALL_TILES) if opening_rank(u) > opening_rank(t))
    for t in ALL_TILES
]


@dataclass(frozen=True)
class Belief:
    """The unseen tiles and what each of the opponent's tiles cannot be.

    ``unseen``: the mask of tiles in the opponent's hand or the talon;
    ``slots``: one mask of excluded tiles per tile in the opponent's hand;
    ``talon``: the talon's size; ``informed``: whether the events of the whole
    hand were there to read (if not, only the sizes constrain a world).
    """

    unseen: int
    slots: tuple[int, ...]
    talon: int
    informed: bool

    def sample(self, rng: random.Random) -> tuple[int, list[int]]:
        """One world: the opponent's hand (a mask) and the talon (tiles, drawn from the end)."""
        free = self.unseen
        hand = 0
        for excluded in sorted(self.slots, key=lambda m: -m.bit_count()):
            allowed = tiles_of(free & ~excluded) or tiles_of(free)
            t = rng.choice(allowed)
            hand |= BIT[t]
            free &= ~BIT[t]
        talon = tiles_of(free)
        rng.shuffle(talon)
        return hand, talon


def belief(view: dict[str, Any], events: list[dict[str, Any]]) -> Belief:
    """What ``view``'s seat may believe, given this hand's ``events`` in ``seq`` order."""
    seat = view["seat"]
    opp = 1 - seat
    hand = mask_of(view["hand"])
    placed = mask_of([p["tile"] for p in view["layout"]])
    unseen = ALL_MASK & ~hand & ~placed
    size = view["hand_sizes"][opp]
    talon = view["talon"]
    slots = _slots(events, opp) if _complete(events, view["hand_no"]) else None
    informed = slots is not None and len(slots) == size
    if not informed:
        slots = [0] * size
    assert slots is not None
    if unseen.bit_count() != size + talon:
        raise ValueError("the view's counts do not add up to 28 tiles")
    return Belief(unseen, tuple(slots), talon, informed)


def _complete(events: list[dict[str, Any]], hand_no: int) -> bool:
    """The hand's events from its start, with no ``seq`` missing."""
    if not events or events[0]["type"] != "hand_start" or events[0]["hand"] != hand_no:
        return False
    return all(b["seq"] == a["seq"] + 1 for a, b in zip(events, events[1:], strict=False))


def _slots(events: list[dict[str, Any]], opp: int) -> list[int] | None:
    """Replay the hand's events; the opponent's slots now, or ``None`` if they do not fit."""
    start = events[0]
    slots = [0] * start["hand_sizes"][opp]
    forced = start["opening"] == "forced"
    lay = Layout()
    drawing = False  # inside the opponent's run of draws this turn
    for ev in events[1:]:
        kind, player = ev["type"], ev["player"]
        if kind == "place":
            tile = normalize(ev["tile"])
            t = INDEX[tile]
            if forced and lay.empty:
                # The forced opening was the highest dealt tile (RULES §2).
                slots = [m | _RANKED_ABOVE[t] for m in slots]
            if player == opp:
                if drawing:
                    slots.pop()  # the tile just drawn, which had to be placed at once
                else:
                    free = [i for i, m in enumerate(slots) if not m & BIT[t]]
                    if not free:
                        return None
                    del slots[free[0]]
            at = ev["at"]
            lay.place(tile, None if at is None else (normalize(at["tile"]), at["side"]), player)
            drawing = False
        elif player == opp and kind in ("draw", "pass"):
            fits = _fitting(lay)
            if not drawing:
                slots = [m | fits for m in slots]
            if kind == "draw":
                slots.append(fits)  # it did not fit, or the next event places it
            drawing = kind == "draw"
        elif player is not None:
            drawing = False
    return slots


def _fitting(lay: Layout) -> int:
    """Every tile that fits an open position of ``lay``."""
    m = 0
    for _, _, v in lay.open_positions():
        m |= HAS[v]
    return m
