"""The match's time: the clock read, the windows, and when a row must next be looked at.

Every change writes ``wake_at_ms`` (:func:`next_wakeup`): a clock running out,
a start or continue window closing, the computer's time to think, the seat
cut by an outage not being back. The sweeper (``matches.clock``) finds overdue
rows by that column, so no deadline needs a timer in memory.

Read the clock through :func:`now_ms` (as ``timing.now_ms()``: tests set it).
"""

from __future__ import annotations

import time

import engine
from matches import conf
from matches.models import Match
from matches.play.credit import LastCredit


def now_ms() -> int:
    """Wall-clock epoch milliseconds: the clocks, windows and deadlines of a match read this.

    Django's ``timezone.now()`` stamps the rows' dates (started, finished, an
    offer's expiry) and the queue's presence; those are no match clock.
    """
    return time.time_ns() // 1_000_000


def computer_seat(m: Match) -> tuple[int, int] | None:
    """``(seat, level)`` of the site's computer player in ``m``, if one plays."""
    if m.computer_seat is None or not m.computer_level:
        return None
    return m.computer_seat, m.computer_level


def computer_ready(m: Match) -> None:
    # The computer presses 開始 and 次へ at once: only the person is waited for.
    found = computer_seat(m)
    if found is not None:
        ready = list(m.ready)
        ready[found[0]] = True
        m.ready = ready


def computer_to_act(m: Match, state: engine.MatchState) -> tuple[int, int] | None:
    """``(seat, level)`` when the computer must decide now (no forced action pending)."""
    found = computer_seat(m)
    if (
        found is None
        or state.phase not in (engine.AUCTION, engine.PLAY)
        or state.to_act != found[0]
        or state.awaiting_reveal
        or engine.forced_action(state) is not None
    ):
        return None
    return found


def computer_pause() -> tuple[int, int]:
    """``(think_at, release_at)``: ms after the computer's decision began.

    It starts thinking at the first and its move is released at the second,
    whatever it computed and however long that took: no timing tells what its
    hand holds (``matches.lobby.computer``). Never on the opponent's clock: the
    opponent is not to act meanwhile.
    """
    return conf.computer_pause_ms()


def rejoin_until(m: Match, state: engine.MatchState | None) -> int | None:
    """Until when the seat whose decision an outage cut may still come back for it.

    ``None`` once it came back (or acted), or when the decision running is not the
    one the outage cut. Meanwhile its clock cannot run out (:func:`next_wakeup`,
    :func:`matches.play.act.act`): the time from the server's return to the seat's is ours.
    """
    credit = LastCredit.of(m)
    if credit is None or credit.rejoin_until is None or state is None:
        return None
    cut = state.to_act == credit.seat and state.decision_start == credit.start
    # A decision that started while its seat was not back yet (the opponent came back
    # first and moved): held the same way, until that seat is back too.
    if not cut and state.to_act not in credit.away:
        return None
    return credit.rejoin_until


def next_wakeup(m: Match, state: engine.MatchState | None) -> int | None:
    """When the sweeper must next look at this match (epoch ms), if ever."""
    if m.is_over:
        return None
    if m.status == Match.Status.WAITING:
        return m.ready_deadline_ms
    if state is None:
        return None
    if state.phase == engine.HAND_OVER:
        return m.ready_deadline_ms
    deadline = engine.deadline(state)
    if deadline is not None and computer_to_act(m, state) is not None:
        assert state.decision_start is not None
        return min(deadline, state.decision_start + computer_pause()[0])
    held = rejoin_until(m, state)
    if deadline is not None and held is not None:
        return max(deadline, held)
    return deadline
