"""Our outages: nobody pays for time the platform could not receive frames.

:func:`credit_outage` gives every open match the outage back (or voids a live
match after :data:`OUTAGE_VOID_AFTER_MS`); :func:`rejoin` gives the cut seat
the time until its socket is back, up to ``settings.OUTAGE_REJOIN_MS``. Found by
``matches.clock.liveness``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from django.db import transaction

import engine
from matches import conf
from matches.clock.voiding import VOID_OUTAGE, void_locked
from matches.models import Match
from matches.play import late_push, timing
from matches.play.act import credit_late_pushed, credit_rejoin, seats_back
from matches.play.credit import LastCredit, given_through
from matches.play.seating import OPEN_STATUSES
from matches.play.store import locked_match, save_change, writes_together
from matches.play.timing import rejoin_until

log = logging.getLogger(__name__)

# An outage longer than this voids the matches it froze instead of crediting
# their clocks: the players cannot be expected to be waiting still.
OUTAGE_VOID_AFTER_MS = 180_000


# After an outage the players' sockets come back one by one (the proxy's next
# health check, each page's reconnection delay): the seat whose decision the
# outage cut is given back the time until it is back too, up to
# settings.OUTAGE_REJOIN_MS (+ OUTAGE_REJOIN_PER_MATCH_MS per open match).
# Until then (or its return) its clock cannot run out.


def credit_outage(start_ms: int, end_ms: int) -> list[int]:
    """The platform could not receive frames from ``start_ms`` to ``end_ms``: nobody pays.

    Every waiting or live match is given the outage back (RULES §8; ARCHITECTURE
    "Time"): a running decision's clock by ``engine.credit``, a start or
    continue window by moving its deadline on. After an outage longer than
    :data:`OUTAGE_VOID_AFTER_MS` a live match is voided instead (no rating
    change). Returns the ids changed.

    Every open match is locked first, in one statement, and stays locked until the
    credit commits (with the beat that found the outage, :func:`beat`): a frame that
    arrives meanwhile waits for it — its receipt is stamped on arrival, so the wait
    costs its player nothing —, and is applied to the credited clock. Locking match
    by match let a seat back early act on a match still waiting its turn in the
    loop (the drill at 200 matches: 5 s to credit them all, 508 ms charged).
    """
    with transaction.atomic():
        return _credit_all(start_ms, end_ms)


def _credit_all(start_ms: int, end_ms: int) -> list[int]:
    # Each row read whole as it is locked: at 500 matches a second read of each
    # (already locked) and a savepoint around each were two thirds of the credit's
    # second, which a restart of the whole tier waits for before it listens.
    matches = list(
        Match.objects.select_for_update().filter(status__in=OPEN_STATUSES).order_by("pk")
    )
    ids = [m.pk for m in matches]
    changed = []
    # However long the wave takes (a loaded machine brought the last of 100 matches'
    # sockets back 20 s after the restart): a seat that is back ends its hold at once,
    # so only a player who never comes back makes the opponent wait this long.
    rejoin_ms = conf.outage_rejoin_ms() + len(ids) * conf.outage_rejoin_per_match_ms()
    rejoin_ms = min(rejoin_ms, OUTAGE_VOID_AFTER_MS)
    # Turns that had reached their sockets late before the outage: that wait first.
    lates = late_push.read([(pk, seat) for pk in ids for seat in (0, 1)])
    with writes_together():  # every match's change in one round trip, not two each
        for m in matches:
            if _credit_one(m, start_ms, end_ms, rejoin_ms, lates):
                changed.append(m.pk)
    if changed:
        log.warning(
            "outage of %d ms (%d → %d) credited to matches %s",
            end_ms - start_ms,
            start_ms,
            end_ms,
            changed,
        )
    return changed


def _credit_one(
    m: Match,
    start_ms: int,
    end_ms: int,
    rejoin_ms: int | None = None,
    lates: dict[tuple[int, int], late_push.Late] | None = None,
) -> bool:
    """Give match ``m`` (its row locked by this transaction) the outage back."""
    if m.is_over:
        return False
    state = engine.from_dict(m.state) if m.state is not None else None
    if m.status == Match.Status.LIVE and end_ms - start_ms > OUTAGE_VOID_AFTER_MS:
        void_locked(m, state, VOID_OUTAGE, end_ms)
        return True
    before = state
    events: list[dict[str, Any]] = []
    if state is not None and state.to_act is not None and engine.deadline(state) is not None:
        late = (lates or {}).get((m.pk, state.to_act))
        state = credit_late_pushed(m, state, state.to_act, late, end_ms, events, until=start_ms)
    # Time already given back (a killed peer's seats, a rejoin) is not given twice.
    start_ms = max(start_ms, given_through(m) or start_ms)
    if start_ms >= end_ms:
        return _save_pushes(m, state, events, before, end_ms)
    event: dict[str, Any] = {"type": "credit", "from": start_ms, "to": end_ms, "t": end_ms}
    if state is not None and engine.deadline(state) is not None:
        state, ms = engine.credit(state, start_ms, end_ms)
        event.update(ms=ms, player=state.to_act)
    elif m.ready_deadline_ms is not None and m.ready_deadline_ms > start_ms:
        ms = end_ms - start_ms
        m.ready_deadline_ms += ms
        event.update(ms=ms, player=None, window=True)
    else:
        return _save_pushes(m, state, events, before, end_ms)
    if not event["ms"]:
        return _save_pushes(m, state, events, before, end_ms)
    credit = LastCredit(ms=event["ms"], seat=event["player"], to=end_ms, through=end_ms)
    people = tuple(s for s in (0, 1) if s != m.computer_seat)
    window = conf.outage_rejoin_ms() if rejoin_ms is None else rejoin_ms
    if credit.seat is not None and credit.seat != m.computer_seat:
        # A person's socket must come back too (settings.OUTAGE_REJOIN_MS): every
        # person's seat is away until its socket is back.
        assert state is not None
        credit = replace(
            credit, start=state.decision_start, rejoin_until=end_ms + window, away=people
        )
    elif credit.seat is None and m.status == Match.Status.LIVE and state is not None:
        # The outage hit between hands (次へ's window moved on). The seat that had
        # pressed 次へ may still be in the wave when the other presses it and moves:
        # its first decision of the new hand is held until it is back, the same way.
        credit = replace(credit, rejoin_until=end_ms + window, away=people)
    credit.save_to(m)
    save_change(m, state, [*events, event], before=before, now=end_ms)
    return True


def _save_pushes(
    m: Match,
    state: engine.MatchState | None,
    events: list[dict[str, Any]],
    before: engine.MatchState | None,
    now: int,
) -> bool:
    """Save a late push's credit given where the outage gave nothing more."""
    if not events:
        return False
    save_change(m, state, events, before=before, now=now)
    return True


def rejoin(match_id: int, user: Any, now: int | None = None, *, hold: bool = False) -> bool:
    """A seat's socket is back after an outage: give it back the time it took.

    A no-op (``False``) unless ``user`` holds the seat whose decision the last
    outage cut, that decision still runs, and the seat has not come back yet.
    ``hold`` (a socket that connected and was sent its view): the time until now is
    given, and the seat stays held until its first action (``credit_rejoin``).
    """
    with transaction.atomic():
        m = locked_match(match_id)
        credit = None if m is None else LastCredit.of(m)
        if m is None or credit is None or m.is_over or m.status != Match.Status.LIVE:
            return False
        state = engine.from_dict(m.state) if m.state is not None else None
        mine = m.seats_of(getattr(user, "pk", None))
        if state is None or rejoin_until(m, state) is None or state.to_act not in mine:
            if state is not None and set(mine) & set(credit.away) and not hold:
                seats_back(m, mine)  # back, though not to act: its next decision is not held
                m.save(update_fields=["last_credit"])
            return False
        t = timing.now_ms() if now is None else now
        events: list[dict[str, Any]] = []
        before = state
        state = credit_rejoin(m, state, t, events, hold=hold)
        if not hold:
            seats_back(m, mine)  # a same-device player is back for both seats
        if not events:
            m.save(update_fields=["last_credit"])
            return False
        save_change(m, state, events, before=before, now=t)
        return True
