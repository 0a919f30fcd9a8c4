"""Choosing arena pairs (pure): by closeness in the standings, no immediate rematch.

The waiting players are taken in standings order (rank 1 first). Each is paired
with the nearest waiting player below it in the table who is not the opponent
it (or they) just played. The same opponent twice in a row is allowed only
when nobody else waits: exactly those two players are waiting. Anyone left
over waits for the next pass (a few seconds later).

Linear in the number of waiting players in practice (the nearest fresh
opponent is almost always the next one or two rows down), so a pass over 500
players takes well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Waiting:
    user_id: int
    rank: int  # place in the standings, 1 = top
    last_opponent_id: int | None = None


def _rematch(a: Waiting, b: Waiting) -> bool:
    return a.last_opponent_id == b.user_id or b.last_opponent_id == a.user_id


def choose_pairs(waiting: Sequence[Waiting]) -> list[tuple[Waiting, Waiting]]:
    """Pairs of waiting players, closest in rank first.

    >>> w = [Waiting(1, 1, 2), Waiting(2, 2, 1), Waiting(3, 3)]
    >>> [(a.user_id, b.user_id) for a, b in choose_pairs(w)]
    [(1, 3)]
    >>> [(a.user_id, b.user_id) for a, b in choose_pairs(w[:2])]
    [(1, 2)]
    """
    players = sorted(waiting, key=lambda w: (w.rank, w.user_id))
    if len(players) == 2:
        return [(players[0], players[1])]  # nobody else waits: even a rematch
    remaining = list(players)
    pairs: list[tuple[Waiting, Waiting]] = []
    while len(remaining) >= 2:
        a = remaining.pop(0)
        for i, b in enumerate(remaining):
            if not _rematch(a, b):
                pairs.append((a, remaining.pop(i)))
                break
    return pairs
