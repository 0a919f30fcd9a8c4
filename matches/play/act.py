"""The act pipeline: one client frame applied to one match, one transaction.

Restore the engine state, let the engine expire the clock at the frame's
*receipt* time, apply the action and the forced follow-ups, finish the match
(ratings in the same transaction) and save the change (``store.save_change``).
Rematch ops are not here: the match socket routes them to ``matches.lobby.rematch``.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

import engine
from matches import conf
from matches.models import Match
from matches.play import fairplay, late_push, stages
from matches.play.audience import Change
from matches.play.credit import LastCredit
from matches.play.errors import ServiceError, illegal_message
from matches.play.frames import IDEMPOTENT_OPS, REMATCH_OPS, parse_frame
from matches.play.late_push import Late
from matches.play.store import locked_match, only_time_since, save_change
from matches.play.timing import computer_ready, rejoin_until
from matches.signals import match_called_off, match_starting


@dataclass
class Outcome:
    match: Match
    state: engine.MatchState | None
    # Set when the frame was not applied although the match changed (it lost on time).
    error: ServiceError | None = None
    change: Change | None = field(default=None, repr=False)


def _deal(match: Match, hand_no: int) -> engine.Deal:
    seed = conf.deal_seed()
    if seed is not None:
        return engine.Deal.shuffled(random.Random(f"{seed}:{match.pk}:{hand_no}"))
    return engine.Deal.shuffled(secrets.SystemRandom())


def seated(m: Match | None, user: Any) -> tuple[Match, list[int], engine.MatchState | None]:
    """``m``, the seats ``user`` holds in it and its engine state; ``not_found`` when
    there is no match and ``not_a_player`` when ``user`` holds no seat."""
    if m is None:
        raise ServiceError("not_found", _("No such match."))
    seats = m.seats_of(getattr(user, "pk", None))
    if not seats:
        raise ServiceError("not_a_player", _("You are not playing in this match."))
    state = engine.from_dict(m.state) if m.state is not None else None
    return m, seats, state


def act(
    match_id: int,
    user: Any,
    frame: Any,
    received_at: int,
    *,
    turn_pushed_at: int | None = None,
    leaving: bool = False,
    turn_from: int | None = None,
) -> Outcome:
    """Apply one client frame, timed at ``received_at`` (epoch ms, stamped on arrival).

    ``turn_pushed_at``: when the socket the frame came on was pushed the view that made
    its seat the one to act (the socket's own record, never the client's): our push's
    lateness beyond :data:`PUSH_BOUND_MS` is given back first (:func:`credit_late_push`),
    from ``turn_from`` at the earliest (the socket's handshake, for its first view).
    ``leaving``: the frame came through a web process that is shutting down, whose
    sockets close in a moment: it is applied, but a held seat stays held (away) until
    it is back through another process.

    Rematch ops belong to ``matches.lobby.rematch.act_rematch`` (the consumer routes them).
    """
    stages.mark("taken")
    parsed = parse_frame(frame)
    op = parsed["op"]
    if op in REMATCH_OPS:
        raise ServiceError("bad_request", _("Unknown operation."))
    with transaction.atomic():
        m, seats, state = seated(locked_match(match_id), user)
        stages.mark("locked")
        if op == "sync":
            return Outcome(m, state)
        if m.is_over:
            raise ServiceError("match_over", _("The match is over."), version=m.version)
        # start, continue and flag only say "I am ready" / "check the clock":
        # harmless at any version, and both players press them at once.
        if (
            parsed["version"] != m.version
            and op not in IDEMPOTENT_OPS
            and not only_time_since(m, parsed["version"])
        ):
            raise ServiceError(
                "stale", _("The match moved on; here is the current position."), version=m.version
            )
        before = state
        events: list[dict[str, Any]] = []
        error = None
        if m.status == Match.Status.WAITING:
            state = _waiting_op(m, seats, op, received_at, events)
        else:
            assert state is not None
            state = _live_op(
                m, state, seats, parsed, received_at, events, turn_pushed_at, leaving, turn_from
            )
            losers = [e["player"] for e in events if e["type"] == "timeout"]
            if op not in ("flag", "continue") and losers and losers[0] in seats:
                # Only the player whose clock ran out is told its frame came too late.
                error = ServiceError("timeout", illegal_message("timeout"), version=m.version + 1)
        if m.status == Match.Status.ABORTED and op != "resign":
            error = ServiceError("aborted", _("Start was not pressed in time: aborted."))
        if not events:
            return Outcome(m, state, error)  # nothing happened (a flag before the deadline)
        change = save_change(m, state, events, before=before, now=received_at, last=True)
        change.received_at = received_at  # published at the commit, with this
    return Outcome(m, state, error, change)


def _waiting_op(
    m: Match, seats: list[int], op: str, now: int, events: list[dict[str, Any]]
) -> engine.MatchState | None:
    assert m.ready_deadline_ms is not None
    if now >= m.ready_deadline_ms:
        abort(m, now, events, blame=not_ready(m))
        return None
    if op == "resign":
        # Before the first decision leaving is an abort: no result (RULES §1).
        abort(m, now, events, blame=seats)
        return None
    if op != "start":
        raise ServiceError("not_started", _("Press Start first."), version=m.version)
    if all(m.ready[s] for s in seats):
        return None  # pressed already: nothing changes
    m.ready = [bool(r) or s in seats for s, r in enumerate(m.ready)]
    events.append({"type": "ready", "seats": seats, "t": now})
    if not all(m.ready):
        return None
    state = engine.new_match(
        _deal(m, 0), now_ms=now, clock=conf.match_clock(), handoff=m.kind == Match.Kind.SAME_DEVICE
    )
    for _receiver, started in match_starting.send(sender=Match, match=m, state=state):
        state = started or state  # an arena's berserk (matches/signals.py)
    m.status = Match.Status.LIVE
    m.started_at = timezone.now()
    m.ready = [False, False]
    m.ready_deadline_ms = None
    events.append({"type": "started", "t": now})
    events.extend(_deal_events_for(state))
    return _follow_forced(m, state, now, events)


def _deal_events_for(state: engine.MatchState) -> list[dict[str, Any]]:
    # The deal itself (both hands, the talon order) is kept for replays only.
    return [
        {
            "type": "deal",
            "hand": state.hand_no,
            "hands": [[list(t) for t in h] for h in state.hands],
            "talon": [list(t) for t in state.talon],
        }
    ] + [e for e in state.log if e["type"] == "hand_start" and e["hand"] == state.hand_no]


def _live_op(
    m: Match,
    state: engine.MatchState,
    seats: list[int],
    parsed: dict[str, Any],
    now: int,
    events: list[dict[str, Any]],
    turn_pushed_at: int | None = None,
    leaving: bool = False,
    turn_from: int | None = None,
) -> engine.MatchState:
    op = parsed["op"]
    held = rejoin_until(m, state)
    if held is not None and state.to_act in seats:
        # Its frame proves it is back — unless it came through a process about to close
        # its socket (a restart's first second: the drill at 500 then charged such a seat
        # its whole way back, up to 14.7 s, its hold over): then it stays away.
        state = credit_rejoin(m, state, now, events, hold=leaving)
        if not leaving:
            seats_back(m, seats)  # a same-device player is back for both seats
        held = None
    elif turn_pushed_at is not None and state.to_act in seats:
        pushed_at = min(turn_pushed_at, now)
        if turn_from is not None and pushed_at:
            # This socket's first view was its push: an earlier socket of the seat, gone
            # since, may have been pushed the turn late first (late_push).
            late = late_push.read_one(m.pk, state.to_act)
            if late is not None and late.pushed_at < pushed_at:
                state = credit_late_pushed(m, state, state.to_act, late, now, events)
                turn_from = max(turn_from, late.pushed_at - PUSH_BOUND_MS)
        state = credit_late_push(m, state, pushed_at, now, events, turn_from)
    # While the seat to act has not come back from our outage its clock cannot
    # run out (the opponent's flag waits for it).
    expired, ev = engine.expire(state, now) if held is None or now >= held else (state, [])
    if ev:
        # The clock ran out before this frame arrived: the frame is not applied.
        events.extend(ev)
        finish_if_over(m, expired, events)
        return expired
    if op == "flag":
        if state.phase == engine.HAND_OVER:
            return maybe_auto_continue(m, state, now, events)
        return state
    if op == "start":
        return state  # "I am ready" once the match runs (a press racing the other's): nothing
    if op == "continue":
        if state.phase != engine.HAND_OVER:
            if parsed["version"] < m.version:
                return state  # sent before the next hand started (the other's press did it)
            raise ServiceError("bad_phase", _("The hand is still being played."), version=m.version)
        window_over = m.ready_deadline_ms is not None and now >= m.ready_deadline_ms
        if not all(m.ready[s] for s in seats):
            m.ready = [bool(r) or s in seats for s, r in enumerate(m.ready)]
            events.append({"type": "ready", "seats": seats, "t": now})
        if all(m.ready) or window_over:
            return _start_next_hand(m, state, now, events)
        return state
    seat = _acting_seat(state, seats)
    action = engine.Action(
        op,
        seat,
        tile=parsed.get("tile"),
        at=parsed.get("at"),
        amount=parsed.get("amount"),
    )
    try:
        state, ev = engine.apply(state, action, now)
    except engine.IllegalAction as e:
        raise ServiceError(e.code, illegal_message(e.code), version=m.version) from None
    events.extend(ev)
    return _follow_forced(m, state, now, events)


def _acting_seat(state: engine.MatchState, seats: list[int]) -> int:
    if len(seats) == 1:
        return seats[0]
    # Same device: the device acts for whoever is to act (or seat 0 between hands).
    return state.to_act if state.to_act is not None else 0


def _follow_forced(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    """Apply forced openings, draws, passes and forced auction answers at once.

    RULES §2, §5, §6: the server plays them for the player, so no time passes.
    At one device, a forced opening needs nobody's hand: the hand-off before it
    is answered for the player too (the engine, like the conformance cases,
    asks for a reveal before every decision period).
    """
    while (forced := forced_step(state)) is not None:
        state, ev = engine.apply(state, forced, now)
        for e in ev:
            e["forced"] = True
        events.extend(ev)
    if state.phase == engine.HAND_OVER and any(e["type"] == "hand_end" for e in events):
        m.ready = [False, False]
        computer_ready(m)
        m.ready_deadline_ms = now + conf.continue_window_ms()
    finish_if_over(m, state, events)
    return state


def forced_step(state: engine.MatchState) -> engine.Action | None:
    """The next action the server plays for a player (``engine.forced_action``), and at
    one device the hand-off before a forced opening, which needs nobody's hand."""
    if (
        state.awaiting_reveal
        and state.phase == engine.PLAY
        and state.layout.empty
        and state.forced_tile is not None
        and state.to_act is not None
    ):
        return engine.Action("reveal", state.to_act)
    return engine.forced_action(state)


def _start_next_hand(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    state, ev = engine.next_hand(state, _deal(m, state.hand_no + 1), now)
    m.ready = [False, False]
    m.ready_deadline_ms = None
    events.extend(_deal_events_for(state))
    return _follow_forced(m, state, now, events)


def maybe_auto_continue(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    if m.ready_deadline_ms is not None and now >= m.ready_deadline_ms:
        return _start_next_hand(m, state, now, events)
    return state


def finish_if_over(m: Match, state: engine.MatchState, events: list[dict[str, Any]]) -> None:
    """Finish ``m`` if ``state`` is over; ``events``: this change's, not yet recorded."""
    if state.phase != engine.MATCH_OVER or m.status == Match.Status.FINISHED:
        return
    m.status = Match.Status.FINISHED
    m.winner_seat = state.winner
    m.end_reason = state.end or ""
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    # Rated only if really played, and not once too often by the same pair.
    m.unrated_reason = fairplay.unrated_reason(m, events)
    # Ratings change in this same transaction: never a finished match without them.
    from ratings.services import settle_match

    changes = {c.player_id: c.change for c in settle_match(m)}
    if changes:
        m.rating_delta = [changes.get(m.player0_id), changes.get(m.player1_id)]


def abort(m: Match, now: int, events: list[dict[str, Any]], *, blame: list[int]) -> None:
    """Abort waiting ``m``; in ranked play the ``blame`` seats are charged a no-show."""
    m.status = Match.Status.ABORTED
    m.end_reason = "abort"
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    events.append({"type": "aborted", "t": now})
    match_called_off.send(sender=Match, match=m)  # a called-off invite opens again (lobby)
    fairplay.record_no_show(m, blame)


def not_ready(m: Match) -> list[int]:
    """The seats that have not pressed 開始 (charged when the start window closes)."""
    return [s for s, r in enumerate(m.ready) if not r]


PUSH_BOUND_MS = 100  # our push's lateness a player is charged for, at most (as receipt's)


def credit_late_push(
    m: Match,
    state: engine.MatchState,
    pushed_at: int,
    now: int,
    events: list[dict[str, Any]],
    not_before: int | None = None,
) -> engine.MatchState:
    """The seat to act was pushed its turn at ``pushed_at``: what the push took beyond
    :data:`PUSH_BOUND_MS` after its decision began (or after ``not_before``, if later:
    a socket's first view is its push from the handshake's arrival) is given back.

    The push is ours from the commit to the socket: the transaction, the channel
    layer, the loop's backlog (a reconnect wave at 500 matches held some pushes to
    the sockets still connected for 8 s, and their clocks ran meanwhile). The time
    on the network to the player and back stays theirs, as everywhere. Nothing is
    given twice: a credit before (an outage, a hold) is the start's lower bound.
    """
    if state.decision_start is None:
        return state
    credit = LastCredit.of(m)
    start = max(state.decision_start, not_before or 0)
    if credit is not None:
        start = max(start, credit.given_through())
    end = pushed_at - PUSH_BOUND_MS
    state, ms = engine.credit(state, start, end)
    if not ms:
        return state
    if credit is not None:  # the next credit starts after this one
        replace(credit, through=max(credit.through or 0, end)).save_to(m)
    events.append(
        {
            "type": "credit",
            "from": end - ms,
            "to": end,
            "ms": ms,
            "player": state.to_act,
            "push": True,
            "t": now,
        }  # fmt: skip
    )
    return state


def credit_late_pushed(
    m: Match,
    state: engine.MatchState,
    seat: int,
    late: Late | None,
    now: int,
    events: list[dict[str, Any]],
    *,
    until: int | None = None,
) -> engine.MatchState:
    """``late``, a push noted by a socket of ``seat`` (``late_push``), is given back if it
    is of the running decision and ``seat`` is to act — the wait up to ``until`` at most
    (where the credit that follows starts)."""
    if late is None or state.to_act != seat or not late.of_decision(state.decision_start):
        return state
    pushed_at = late.pushed_at if until is None else min(late.pushed_at, until + PUSH_BOUND_MS)
    return credit_late_push(m, state, pushed_at, now, events, late.since)


def credit_rejoin(
    m: Match,
    state: engine.MatchState,
    now: int,
    events: list[dict[str, Any]],
    *,
    hold: bool = False,
) -> engine.MatchState:
    """The cut decision's seat is back at ``now``: give it the time since the server was.

    ``hold``: its socket is back (and has its view), but the hold lasts until its first
    action — in a reconnect wave the view may reach the player seconds later —, which
    is then given the time since ``now`` (``given_to``).
    """
    until = rejoin_until(m, state)
    credit = LastCredit.of(m)
    if until is None or credit is None:
        return state
    back, seat = credit.to, state.to_act
    # From where the last credit (this hold's or another's) left off: never twice.
    since = credit.given_through()
    cut = seat == credit.seat and state.decision_start == credit.start
    end = min(now, until)
    state, ms = engine.credit(state, since, end)
    if hold:
        start = state.decision_start if cut else credit.start
        given = replace(
            credit,
            ms=credit.ms + (ms if cut else 0),
            start=start,
            given_to=max(since, min(now, until)),
        )
    else:
        away = tuple(s for s in credit.away if s != seat)
        given = LastCredit(
            ms=credit.ms + (ms if cut else 0),
            seat=credit.seat,
            to=back,
            through=max(credit.given_through(), min(now, until)),
        )
        if away:  # the other seat is not back yet: its decisions stay held
            start = None if cut else credit.start
            given = replace(given, start=start, rejoin_until=until, away=away)
    given.save_to(m)  # else the hold is over
    if ms:
        events.append(
            {
                "type": "credit",
                "from": end - ms,  # what was given: the decision's part of [since, end)
                "to": end,
                "ms": ms,
                "player": seat,
                "rejoin": True,
                "t": now,
            }
        )
    return state


def seats_back(m: Match, seats: Sequence[int]) -> None:
    """``seats`` are back after our outage: no decision of theirs is held any more."""
    credit = LastCredit.of(m)
    if credit is None or not credit.away:
        return
    away = tuple(s for s in credit.away if s not in seats)
    if away:
        replace(credit, away=away).save_to(m)
    else:  # everyone is back (the cut seat was away too): nothing is held
        LastCredit(
            ms=credit.ms, seat=credit.seat, to=credit.to, through=credit.given_through()
        ).save_to(m)
