"""The level-2 (中級) placement policy, and playouts of a hand with it.

Greedy: take the placement that scores most now. Among those that score the
same, avoid leaving the opponent an easy multiple of 5 (what it could score
next with a tile it might hold: any tile the player cannot see, weighted by
the chance it holds one), and shed heavy tiles and doubles (they cost most in
a block, and a double fits only one value). Scoring first, rather than
netting the risk against the score, makes it no weaker in head-to-head play
and keeps it predictable: an immediate 15 is always taken over a 0.

The same policy plays every seat in the level-3 (上級) playouts, each seat
judging only by its own hand, the table and the opponent's hand size.
"""

from __future__ import annotations

from engine.match import round_to_five

from .table import ALL_MASK, BIT, HIGH, LOW, PIPS, Table, tiles_of

# Between placements that score the same: the opponent's best reply counts
# against one (by the chance it can make it), and shedding pips and doubles for it.
REPLY_WEIGHT = 1.0
PIP_WEIGHT = 0.15
DOUBLE_WEIGHT = 1.0
# What going out is worth beyond the hand's own points: the winner becomes the
# jockey, who opens the next hand (RULES §6) unless paid at least 15 to give it
# up. Opening is worth about 9 points by these playouts, so each side of
# "who goes out" counts half of it.
JOCKEY_VALUE = 5


def choose(table: Table, candidates: int, unknown: int, opp_size: int) -> tuple[int | None, int]:
    """The greedy placement ``(position index or None to open, tile)`` among ``candidates``.

    ``unknown`` is every tile the player cannot see (the opponent's hand and
    the talon); ``opp_size`` the opponent's hand size. The caller guarantees
    that some candidate fits (or that the table is empty).
    """
    options = table.options(candidates)
    if len(options) == 1:
        return options[0]
    placed = [(table.place(i, t), i, t) for i, t in options]
    top = max(after.total if after.total % 5 == 0 else 0 for after, _, _ in placed)
    n_unknown = unknown.bit_count()
    best_rest = -1e9
    best = options[0]
    for after, i, t in placed:
        if (after.total if after.total % 5 == 0 else 0) != top:
            continue  # scoring comes first; the rest only breaks ties
        rest = PIP_WEIGHT * PIPS[t] + (DOUBLE_WEIGHT if LOW[t] == HIGH[t] else 0.0)
        possible = unknown & ~BIT[t]
        if possible and opp_size:
            reply, scoring = after.best_reply(possible)
            if reply:
                rest -= REPLY_WEIGHT * min(1.0, scoring * opp_size / n_unknown) * reply
        if rest > best_rest:
            best_rest, best = rest, (i, t)
    return best


def playout(
    table: Table,
    hands: list[int],
    talon: list[int],
    balances: list[int],
    to_act: int,
    passes: int,
    me: int,
    first: tuple[int | None, int] | None = None,
) -> float:
    """Play the hand to its end with ``choose`` for both seats; what ``me`` gains.

    ``talon`` is drawn from its end (``pop``). The gain is ``me``'s balance
    change, points capped at the payer's balance as in the match (RULES §1),
    plus ``JOCKEY_VALUE`` for going out (minus it if the opponent does).
    ``first``, if given, is the first placement of ``to_act`` instead of the
    policy's. Nothing passed in is changed.
    """
    hands = list(hands)
    talon = list(talon)
    bal = list(balances)
    start = bal[me]
    placed = ALL_MASK & ~hands[0] & ~hands[1] & ~_mask(talon)
    p = to_act
    while True:
        hand = hands[p]
        candidates = hand
        if not table.empty:
            open_mask = table.open_mask()
            fit = hand & open_mask
            if fit:
                candidates = fit
            else:
                candidates = 0
                while talon:
                    t = talon.pop()
                    hand |= BIT[t]
                    if open_mask & BIT[t]:
                        candidates = BIT[t]  # a drawn tile that fits is placed at once
                        break
                hands[p] = hand
                if not candidates:
                    passes += 1
                    if passes >= 2:
                        _settle_block(hands, bal)
                        return bal[me] - start
                    p ^= 1
                    continue
        if first is not None:
            i, t = first
            first = None
        else:
            i, t = choose(table, candidates, ALL_MASK & ~hand & ~placed, hands[p ^ 1].bit_count())
        table = table.place(i, t)
        hand ^= BIT[t]
        hands[p] = hand
        placed |= BIT[t]
        passes = 0
        score = table.score()
        if score:
            moved = min(score, bal[p ^ 1])
            bal[p] += moved
            bal[p ^ 1] -= moved
            if not bal[p ^ 1]:
                return bal[me] - start
        if not hand:
            return bal[me] - start + (JOCKEY_VALUE if p == me else -JOCKEY_VALUE)
        p ^= 1


def _mask(tiles: list[int]) -> int:
    m = 0
    for t in tiles:
        m |= BIT[t]
    return m


def _settle_block(hands: list[int], bal: list[int]) -> None:
    """The lighter hand receives the heavier hand's whole total, rounded (RULES §5)."""
    pips = [sum(PIPS[t] for t in tiles_of(h)) for h in hands]
    if pips[0] == pips[1]:
        return
    receiver = 0 if pips[0] < pips[1] else 1
    moved = min(round_to_five(pips[receiver ^ 1]), bal[receiver ^ 1])
    bal[receiver] += moved
    bal[receiver ^ 1] -= moved
