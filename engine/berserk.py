"""Berserk (arena tournaments): a seat gives up half of its main time before using any.

An addition for the platform's arenas, not a rule of the game itself: the
player trades half of the match's main time (120 s → 60 s) for one more
tournament point if it wins. The engine's part is only the clock: a copy of
the state with that seat's main time halved. Nothing else changes — no event
is logged, no other seat or field is touched — so every existing behaviour
and output stays exactly as it was.
"""

from __future__ import annotations

from .errors import IllegalAction
from .match import MATCH_OVER, MatchState


def berserk_main_ms(full_ms: int) -> int:
    """The main time a berserk seat keeps: half of ``full_ms``, rounded down.

    >>> berserk_main_ms(120_000)
    60000
    """
    return full_ms // 2


def can_berserk(state: MatchState, seat: int) -> bool:
    """Whether ``seat`` may still go berserk: a clock runs and it has used no main time."""
    return (
        seat in (0, 1)
        and state.phase != MATCH_OVER
        and state.clock is not None
        and state.main is not None
        and state.main[seat] == state.clock.main_ms
    )


def berserk(state: MatchState, seat: int) -> MatchState:
    """A copy of ``state`` in which ``seat`` has half of the match's main time.

    Refused (``IllegalAction("bad_phase")``) once the seat has used any main
    time, a second time, without a clock, or after the match ended. A decision
    already running keeps its start: its delay is unchanged, and its deadline
    moves earlier by the time given up.

    >>> from .match import ALL_TILES, ClockConfig, Deal, deadline, new_match
    >>> s = new_match(Deal.from_order(list(ALL_TILES)), now_ms=0, clock=ClockConfig())
    >>> b = berserk(s, 1)
    >>> b.main, s.main
    ([120000, 60000], [120000, 120000])
    >>> can_berserk(b, 1), can_berserk(b, 0)
    (False, True)
    """
    if not can_berserk(state, seat):
        raise IllegalAction("bad_phase", "berserk only before any main time is used")
    assert state.main is not None and state.clock is not None
    s = state.copy()
    assert s.main is not None
    s.main[seat] = berserk_main_ms(state.clock.main_ms)
    return s
