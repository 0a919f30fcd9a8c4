"""Every change to a match happens here, one transaction each.

The pattern of every write (after Zulip's ``do_*`` actions and healthchecks'
``Check.ping``): lock the ``Match`` row with ``select_for_update`` (this is
what serializes two frames for the same match, a frame racing the deadline
timer, and two Daphne processes), restore the engine state, let the engine
expire the clock at the *receipt* time, apply the action and the forced
follow-ups, save state + version, append the events, and only after the
commit push each seat its own view and schedule the deadline backstop.
"""

from __future__ import annotations

import logging
import random
import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

import engine
from engine.layout import ALL_SIDES

from .models import Invite, Match, MatchEvent

log = logging.getLogger(__name__)

START_WINDOW_MS = 60_000  # both must press 開始 within this, or the match is aborted
CONTINUE_WINDOW_MS = 30_000  # between hands: 次へ, or the next hand starts by itself
MAX_FRAME_BYTES = 4096
GUEST_NAME_MAX = 40

ENGINE_OPS = ("place", "bid", "accept", "decline", "resign", "reveal")
PLATFORM_OPS = ("start", "continue", "flag", "sync")
REMATCH_OPS = ("rematch", "rematch_accept", "rematch_decline")  # matches/rematch.py
OPS = ENGINE_OPS + PLATFORM_OPS + REMATCH_OPS
IDEMPOTENT_OPS = ("start", "continue", "flag")


def _setting_ms(name: str, default: int) -> int:
    # Tests shorten these (a real match always uses the RULES §7 numbers).
    value = getattr(settings, name, default)
    return int(value)


def match_clock() -> engine.ClockConfig:
    """120 s main time and a 10 s delay (RULES §7); settings may shorten both in tests."""
    return engine.ClockConfig(
        main_ms=_setting_ms("MATCH_MAIN_MS", 120_000),
        delay_ms=_setting_ms("MATCH_DELAY_MS", 10_000),
    )


def start_window_ms() -> int:
    return _setting_ms("MATCH_START_WINDOW_MS", START_WINDOW_MS)


def continue_window_ms() -> int:
    return _setting_ms("MATCH_CONTINUE_WINDOW_MS", CONTINUE_WINDOW_MS)


def now_ms() -> int:
    """Wall-clock epoch milliseconds: the only clock read of the platform's match logic."""
    return time.time_ns() // 1_000_000


class ServiceError(Exception):
    """A request that changes nothing. ``code`` is a stable word; ``message`` is for people."""

    def __init__(self, code: str, message: str, *, version: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.version = version


@dataclass
class Outcome:
    match: Match
    state: engine.MatchState | None
    # Set when the frame was not applied although the match changed (it lost on time).
    error: ServiceError | None = None


# --- creating matches ------------------------------------------------------


def _deal(match: Match, hand_no: int) -> engine.Deal:
    seed = getattr(settings, "DEAL_SEED", None)
    if seed is not None:
        return engine.Deal.shuffled(random.Random(f"{seed}:{match.pk}:{hand_no}"))
    return engine.Deal.shuffled(secrets.SystemRandom())


def _new_match(kind: str, player0: Any, player1: Any = None, guest_name: str = "") -> Match:
    now = now_ms()
    m = Match.objects.create(
        kind=kind,
        player0=player0,
        player1=player1,
        guest_name=guest_name,
        ready_deadline_ms=now + start_window_ms(),
    )
    _record(m, [{"type": "created", "t": now}])
    _after_commit(m, None)
    return m


def _claim_players(user_ids: list[int]) -> None:
    """Take the players' row locks and out of the ranked queue before a match is made.

    The ranked pairing takes the same locks and re-checks who is busy under
    them, so a pairing committing at the same moment as an invite can never put
    one player into two new matches.
    """
    from . import queue

    queue.lock_users(user_ids)
    for entry in queue.QueueEntry.objects.filter(user_id__in=user_ids).select_related("user"):
        queue.leave(entry.user)


@transaction.atomic
def create_same_device(user: Any, guest_name: str) -> Match:
    """A match for two people at one device; the second seat is a named guest."""
    name = (guest_name or "").strip()
    if not name:
        raise ServiceError("bad_request", _("Give the second player a name."))
    if len(name) > GUEST_NAME_MAX:
        raise ServiceError("bad_request", _("That name is too long."))
    _claim_players([user.pk])
    return _new_match(Match.Kind.SAME_DEVICE, user, None, name)


@transaction.atomic
def create_invite(user: Any) -> Invite:
    return Invite.objects.create(creator=user)


@transaction.atomic
def cancel_invite(code: str, user: Any) -> Invite:
    inv = Invite.objects.select_for_update().filter(code=code).first()
    if inv is None:
        raise ServiceError("not_found", _("No such invite."))
    if inv.creator_id != user.pk:
        raise ServiceError("forbidden", _("Only its creator can cancel an invite."))
    if inv.status != Invite.Status.OPEN:
        raise ServiceError("invite_closed", _("This invite is no longer open."))
    inv.status = Invite.Status.CANCELLED
    inv.save(update_fields=["status"])
    return inv


@transaction.atomic
def accept_invite(code: str, user: Any) -> Match:
    """Accept an open invite; two concurrent accepts make exactly one match.

    The invite row is locked, so the second accept waits and then sees it accepted.
    """
    inv = Invite.objects.select_for_update().filter(code=code).first()
    if inv is None:
        raise ServiceError("not_found", _("No such invite."))
    if inv.creator_id == user.pk:
        raise ServiceError("own_invite", _("You cannot accept your own invite."))
    if inv.status == Invite.Status.ACCEPTED:
        raise ServiceError("invite_taken", _("This invite has already been accepted."))
    if inv.status == Invite.Status.CANCELLED:
        raise ServiceError("invite_closed", _("This invite was cancelled."))
    if inv.expired:
        raise ServiceError("invite_expired", _("This invite has expired."))
    _claim_players([inv.creator_id, user.pk])
    m = _new_match(Match.Kind.CASUAL, inv.creator, user)
    inv.status = Invite.Status.ACCEPTED
    inv.accepted_by = user
    inv.match = m
    inv.save(update_fields=["status", "accepted_by", "match"])
    return m


# --- validating frames -----------------------------------------------------


def parse_frame(frame: Any) -> dict[str, Any]:
    """Check a client frame's shape (not its legality). ``ServiceError`` on anything odd."""
    if not isinstance(frame, dict):
        raise ServiceError("bad_request", _("A frame is a JSON object."))
    op = frame.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise ServiceError("bad_request", _("Unknown operation."))
    if op != "sync":
        v = frame.get("version")
        if type(v) is not int or v < 0:
            raise ServiceError("bad_request", _("Every action carries the version it acted on."))
    out: dict[str, Any] = {"op": op, "version": frame.get("version")}
    if op == "place":
        try:
            out["tile"] = engine.normalize(_int_pair(frame.get("tile")))
            at = frame.get("at")
            if at is None:
                out["at"] = None
            else:
                if not isinstance(at, dict) or at.get("side") not in ALL_SIDES:
                    raise ValueError("at")
                out["at"] = (engine.normalize(_int_pair(at.get("tile"))), at["side"])
        except ValueError:
            raise ServiceError("bad_request", _("That is not a tile and position.")) from None
    elif op == "bid":
        amount = frame.get("amount")
        if type(amount) is not int:
            raise ServiceError("bad_request", _("A bid is a whole number of points."))
        out["amount"] = amount
    return out


def _int_pair(x: Any) -> list[int]:
    if not isinstance(x, list) or len(x) != 2 or any(type(v) is not int for v in x):
        raise ValueError("tile")
    return x


# --- the one entry point for a seat's frame --------------------------------


def locked_match(match_id: int) -> Match | None:
    """The match with both players, locked until the transaction ends."""
    return (
        # of=("self",): player1 is nullable (same device), and PostgreSQL
        # refuses FOR UPDATE on the nullable side of the outer join.
        Match.objects.select_for_update(of=("self",))
        .select_related("player0", "player1")
        .filter(pk=match_id)
        .first()
    )


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


def act(match_id: int, user: Any, frame: Any, received_at: int) -> Outcome:
    """Apply one client frame, timed at ``received_at`` (epoch ms, stamped on arrival)."""
    parsed = parse_frame(frame)
    if parsed["op"] in REMATCH_OPS:
        from .rematch import act_rematch

        return act_rematch(match_id, user, parsed["op"])  # type: ignore[no-any-return]
    with transaction.atomic():
        m, seats, state = seated(locked_match(match_id), user)
        op = parsed["op"]
        if op == "sync":
            return Outcome(m, state)
        if m.is_over:
            raise ServiceError("match_over", _("The match is over."), version=m.version)
        # start, continue and flag only say "I am ready" / "check the clock":
        # harmless at any version, and both players press them at once.
        if parsed["version"] != m.version and op not in IDEMPOTENT_OPS:
            raise ServiceError(
                "stale", _("The match moved on; here is the current position."), version=m.version
            )
        events: list[dict[str, Any]] = []
        error = None
        if m.status == Match.Status.WAITING:
            state = _waiting_op(m, seats, op, received_at, events)
        else:
            assert state is not None
            state = _live_op(m, state, seats, parsed, received_at, events)
            losers = [e["player"] for e in events if e["type"] == "timeout"]
            if op not in ("flag", "continue") and losers and losers[0] in seats:
                # Only the player whose clock ran out is told its frame came too late.
                error = ServiceError("timeout", _illegal_message("timeout"), version=m.version + 1)
        if m.status == Match.Status.ABORTED and op != "resign":
            error = ServiceError("aborted", _("Start was not pressed in time: aborted."))
        if not events:
            return Outcome(m, state, error)  # nothing happened (a flag before the deadline)
        _save(m, state, events)
    return Outcome(m, state, error)


def _waiting_op(
    m: Match, seats: list[int], op: str, now: int, events: list[dict[str, Any]]
) -> engine.MatchState | None:
    assert m.ready_deadline_ms is not None
    if now >= m.ready_deadline_ms:
        _abort(m, now, events)
        return None
    if op == "resign":
        # Before the first decision leaving is an abort: no result (RULES §1).
        _abort(m, now, events)
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
        _deal(m, 0), now_ms=now, clock=match_clock(), handoff=m.kind == Match.Kind.SAME_DEVICE
    )
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
) -> engine.MatchState:
    op = parsed["op"]
    expired, ev = engine.expire(state, now)
    if ev:
        # The clock ran out before this frame arrived: the frame is not applied.
        events.extend(ev)
        _finish_if_over(m, expired)
        return expired
    if op == "flag":
        if state.phase == engine.HAND_OVER:
            return _maybe_auto_continue(m, state, now, events)
        return state
    if op == "continue":
        if state.phase != engine.HAND_OVER:
            raise ServiceError("bad_phase", _("The hand is still being played."), version=m.version)
        window_over = m.ready_deadline_ms is not None and now >= m.ready_deadline_ms
        if not all(m.ready[s] for s in seats):
            m.ready = [bool(r) or s in seats for s, r in enumerate(m.ready)]
            events.append({"type": "ready", "seats": seats, "t": now})
        if all(m.ready) or window_over:
            return _start_next_hand(m, state, now, events)
        return state
    seat = _acting_seat(m, state, seats)
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
        raise ServiceError(e.code, _illegal_message(e.code), version=m.version) from None
    events.extend(ev)
    return _follow_forced(m, state, now, events)


def _acting_seat(m: Match, state: engine.MatchState, seats: list[int]) -> int:
    if len(seats) == 1:
        return seats[0]
    # Same device: the device acts for whoever is to act (or seat 0 between hands).
    return state.to_act if state.to_act is not None else 0


def _follow_forced(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    """Apply forced openings, draws, passes and forced auction answers at once.

    RULES §2, §5, §6: the server plays them for the player, so no time passes.
    """
    while (forced := engine.forced_action(state)) is not None:
        state, ev = engine.apply(state, forced, now)
        for e in ev:
            e["forced"] = True
        events.extend(ev)
    if state.phase == engine.HAND_OVER and any(e["type"] == "hand_end" for e in events):
        m.ready = [False, False]
        m.ready_deadline_ms = now + continue_window_ms()
    _finish_if_over(m, state)
    return state


def _start_next_hand(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    state, ev = engine.next_hand(state, _deal(m, state.hand_no + 1), now)
    m.ready = [False, False]
    m.ready_deadline_ms = None
    events.extend(_deal_events_for(state))
    return _follow_forced(m, state, now, events)


def _maybe_auto_continue(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    if m.ready_deadline_ms is not None and now >= m.ready_deadline_ms:
        return _start_next_hand(m, state, now, events)
    return state


def _finish_if_over(m: Match, state: engine.MatchState) -> None:
    if state.phase != engine.MATCH_OVER or m.status == Match.Status.FINISHED:
        return
    m.status = Match.Status.FINISHED
    m.winner_seat = state.winner
    m.end_reason = state.end or ""
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    # Ratings change in this same transaction: never a finished match without them.
    from ratings.services import settle_match

    settle_match(m)


def _abort(m: Match, now: int, events: list[dict[str, Any]]) -> None:
    m.status = Match.Status.ABORTED
    m.end_reason = "abort"
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    events.append({"type": "aborted", "t": now})


_ILLEGAL_MESSAGES = {
    "not_your_turn": "It is not your turn.",
    "not_revealed": "Show your hand first.",
    "not_awaiting": "Nothing waits for a reveal.",
    "bad_position": "That position is not open.",
    "no_match": "That tile does not match that end.",
    "not_in_hand": "That tile is not in your hand.",
    "forced_opening": "You must open with the forced tile.",
    "must_place": "You must place a tile (the one you drew, if you drew).",
    "must_draw": "Draw from the talon.",
    "talon_empty": "The talon is empty.",
    "bad_amount": "Bids are multiples of 5: at least 15, and a raise at least 5 more.",
    "unaffordable": "You cannot afford that bid.",
    "bid_standing": "A bid stands: accept or raise.",
    "no_bid": "There is no bid to accept.",
    "bad_phase": "That is not possible in this phase.",
    "match_over": "The match is over.",
    "timeout": "Your time ran out.",
}


def _illegal_message(code: str) -> str:
    return _(_ILLEGAL_MESSAGES.get(code, "That move is not allowed."))


# --- the deadline backstop -------------------------------------------------


def check_match(match_id: int, version: int, now: int | None = None) -> bool:
    """The backstop: whatever must happen by itself at this match's next deadline.

    Scheduled for ``version``; a newer version means a newer timer exists, so a
    stale one does nothing (idempotent). Returns whether anything changed.
    The time is read *after* the lock is held, so a late backstop can only find
    a deadline further in the past: it never lets a late move through, and a
    frame that arrived in time was stamped on arrival and is judged by that.
    """
    with transaction.atomic():
        m = Match.objects.select_for_update().filter(pk=match_id).first()
        if m is None or m.version != version or m.is_over:
            return False
        t = now_ms() if now is None else now
        events: list[dict[str, Any]] = []
        state = engine.from_dict(m.state) if m.state is not None else None
        if m.status == Match.Status.WAITING:
            if m.ready_deadline_ms is None or t < m.ready_deadline_ms:
                _after_commit(m, state, push=False)  # woke early: sleep again
                return False
            _abort(m, t, events)
        else:
            assert state is not None
            before = m.version
            new, ev = engine.expire(state, t)
            if ev:
                events.extend(ev)
                _finish_if_over(m, new)
                state = new
            elif state.phase == engine.HAND_OVER:
                state = _maybe_auto_continue(m, state, t, events)
            if not events:
                assert m.version == before
                _after_commit(m, state, push=False)
                return False
        _save(m, state, events)
        return True


def _save(m: Match, state: engine.MatchState | None, events: list[dict[str, Any]]) -> None:
    m.state = None if state is None else engine.to_dict(state)
    m.version += 1
    m.save()
    _record(m, events)
    _after_commit(m, state)


def _record(m: Match, events: list[dict[str, Any]]) -> None:
    MatchEvent.objects.bulk_create(
        MatchEvent(
            match=m,
            kind=str(e.get("type", "")),
            data=e,
            at_ms=int(e.get("t", 0)),
            version=m.version,
        )
        for e in events
    )


def _after_commit(m: Match, state: engine.MatchState | None, *, push: bool = True) -> None:
    from . import broadcast, timers

    match_id, version = m.pk, m.version
    wake = next_wakeup(m, state)

    def after() -> None:
        if push:
            broadcast.push_match(match_id)
        if wake is not None:
            timers.schedule(match_id, version, wake)

    transaction.on_commit(after)


def rearm(m: Match) -> None:
    """Schedule the backstop for the match as it stands (after a process restart, say)."""
    state = engine.from_dict(m.state) if m.state is not None else None
    wake = next_wakeup(m, state)
    if wake is not None:
        from . import timers

        timers.schedule(m.pk, m.version, wake)


def next_wakeup(m: Match, state: engine.MatchState | None) -> int | None:
    """When the backstop must next look at this match (epoch ms), if ever."""
    if m.is_over:
        return None
    if m.status == Match.Status.WAITING:
        return m.ready_deadline_ms
    if state is None:
        return None
    if state.phase == engine.HAND_OVER:
        return m.ready_deadline_ms
    return engine.deadline(state)


# --- views -----------------------------------------------------------------


def view_for(
    m: Match, state: engine.MatchState | None, seat: int | None, now: int
) -> dict[str, Any]:
    """What ``seat`` sees (PROTOCOL.md) plus the platform's ``match`` block.

    At a same-device match ``seat`` is ignored: the device sees the seat to
    act once it has revealed, and a spectator's view (no hand) otherwise.
    """
    if m.kind == Match.Kind.SAME_DEVICE:
        seat = None
        if state is not None and state.to_act is not None and not state.awaiting_reveal:
            seat = state.to_act
    if state is None:
        view: dict[str, Any] = {"seat": seat, "phase": None}
    else:
        view = engine.view_for(state, seat, now)
    view["match"] = {
        "id": m.pk,
        "kind": m.kind,
        "status": m.status,
        "names": m.names(),
        "you": seat,
        "ready": list(m.ready),
        "ready_deadline": m.ready_deadline_ms,
        "server_now": now,
        "result": _result(m),
        "version": m.version,
        "void_reason": m.void_reason,
    }
    from .rematch import rematch_block

    view["match"]["rematch"] = rematch_block(m)
    return view


def _result(m: Match) -> dict[str, Any] | None:
    if m.status == Match.Status.FINISHED:
        return {"winner": m.winner_seat, "end": m.end_reason}
    if m.status == Match.Status.ABORTED:
        return {"winner": None, "end": "abort"}
    if m.status == Match.Status.VOIDED:
        return {"winner": None, "end": "void", "reason": m.void_reason}
    return None


def current_view(match_id: int, user: Any) -> tuple[Match, dict[str, Any]]:
    """A seat holder's current view (for the page and reconnects); ``ServiceError`` otherwise."""
    m, seats, state = seated(
        Match.objects.select_related("player0", "player1").filter(pk=match_id).first(), user
    )
    return m, view_for(m, state, seats[0], now_ms())


def seat_views(match_id: int) -> tuple[Match, dict[str, dict[str, Any]]] | None:
    """Each audience's view, keyed by channel group suffix (``seat0``, ``seat1`` or ``device``)."""
    m = Match.objects.select_related("player0", "player1").filter(pk=match_id).first()
    if m is None:
        return None
    state = engine.from_dict(m.state) if m.state is not None else None
    now = now_ms()
    if m.kind == Match.Kind.SAME_DEVICE:
        return m, {"device": view_for(m, state, None, now)}
    return m, {f"seat{s}": view_for(m, state, s, now) for s in (0, 1)}


def live_matches_of(user: Any) -> list[Match]:
    from django.db.models import Q

    return list(
        Match.objects.filter(
            Q(player0=user) | Q(player1=user),
            status__in=[Match.Status.WAITING, Match.Status.LIVE],
        ).select_related("player0", "player1")
    )
