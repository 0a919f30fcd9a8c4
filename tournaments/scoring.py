"""Arena points (pure): a win 2, a loss 0, streaks, berserk, voids.

- A **win** gives 2 points; a **loss** 0.
- After **two wins in a row** the player is *on fire* (the flame): every further
  win counts double (4) until the next non-win, which puts the fire out.
- **Berserk**: a player who halved their own main time at 開始 and then wins
  gets **one extra point** (not doubled). A berserk loss gives nothing.
- A **void** (a service fault) or an **abort** (開始 not pressed in time) counts
  nothing at all: no points, no game played, the streak is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

WIN_POINTS = 2
BERSERK_BONUS = 1
FIRE_AFTER = 2  # wins in a row before wins count double

WIN, LOSS, NOTHING = "win", "loss", "nothing"


@dataclass(frozen=True)
class Score:
    points: int  # to add
    streak: int  # the new streak (wins in a row)
    played: int  # 1 for a counted game, 0 otherwise
    win: bool


def on_fire(streak: int) -> bool:
    """Whether the next win counts double (the flame)."""
    return streak >= FIRE_AFTER


def score(result: str, streak: int, *, berserk: bool = False) -> Score:
    """What one result adds for a player whose streak is ``streak``.

    >>> [score(WIN, s).points for s in (0, 1, 2, 5)]
    [2, 2, 4, 4]
    >>> score(LOSS, 4), score(NOTHING, 3).streak
    (Score(points=0, streak=0, played=1, win=False), 3)
    >>> score(WIN, 2, berserk=True).points, score(LOSS, 2, berserk=True).points
    (5, 0)
    """
    if result == WIN:
        pts = WIN_POINTS * (2 if on_fire(streak) else 1) + (BERSERK_BONUS if berserk else 0)
        return Score(pts, streak + 1, 1, True)
    if result == LOSS:
        return Score(0, 0, 1, False)
    if result == NOTHING:
        return Score(0, streak, 0, False)
    raise ValueError(f"unknown result {result!r}")
