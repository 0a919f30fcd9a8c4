"""Every change to a match happens here, one transaction each.

The pattern of every write (after Zulip's ``do_*`` actions and healthchecks'
``Check.ping``): lock the ``Match`` row with ``select_for_update`` (this is
what serializes two frames for the same match, a frame racing the deadline
sweeper, and two Daphne processes), restore the engine state, let the engine
expire the clock at the *receipt* time, apply the action and the forced
follow-ups, then one ``UPDATE`` (state, version and the next wake-up time) and
one ``INSERT`` of the events. Each audience's state frame is built from the
state in hand — nothing is read back — and handed to
:data:`matches.signals.match_changed` only after the commit.

**Deadlines** need no timer: every row carries ``wake_at_ms``, when it must
next be looked at if nobody acts (a clock running out, the start or continue
window closing). A sweeper (:func:`due_matches` + :func:`check_match`; run by
``matches.sweeper`` in the Celery worker, or in the web process in the
embedded default) finds overdue rows through an index, so no deadline can be
lost with the process that made it.

This module is the bottom of ``matches/``: it imports only the models, the
engine and ``ratings``; the queue, rematch, sweeper, broadcast and voiding
modules use it, never the other way round.
"""

from __future__ import annotations

import functools
import json
import logging
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

import engine
from accounts.names import clean_guest_name
from engine.layout import ALL_SIDES

from . import fairplay  # rated or not, and ranked no-shows (below services: models only)
from .models import Invite, Match, MatchEvent, QueueEntry, RematchOffer
from .signals import match_changed, queue_left

log = logging.getLogger(__name__)

START_WINDOW_MS = 60_000  # both must press 開始 within this, or the match is aborted
CONTINUE_WINDOW_MS = 30_000  # between hands: 次へ, or the next hand starts by itself
MAX_FRAME_BYTES = 4096  # UTF-8 bytes of one client frame
# The sweeper looks at a row this long after its wake-up time: a frame stamped
# just before a deadline may still be on its way to the row lock, and it is
# judged by its receipt time, so the sweeper must not beat it to the lock.
GRACE_MS = 50
# Abuse limits (issue 8): open invites, and matches not yet over, per user.
MAX_OPEN_INVITES = 20
MAX_OPEN_MATCHES = 3
# An outage longer than this voids the matches it froze instead of crediting
# their clocks: the players cannot be expected to be waiting still.
OUTAGE_VOID_AFTER_MS = 180_000
# After an outage the players' sockets come back one by one (the proxy's next
# health check, each page's reconnection delay): the seat whose decision the
# outage cut is given back the time until it is back too, up to this long.
# Until then (or its return) its clock cannot run out.
OUTAGE_REJOIN_MS = 5_000
# The computer player starts thinking ``lo`` ms after its decision began and its
# move is released at ``hi`` ms, whatever it computed and however long that took
# (no timing tells what its hand holds; matches.computer). Never on the
# opponent's clock: the opponent is not to act meanwhile.
COMPUTER_PAUSE_MS = (400, 1200)

ENGINE_OPS = ("place", "bid", "accept", "decline", "resign", "reveal")
PLATFORM_OPS = ("start", "continue", "flag", "sync")
REMATCH_OPS = ("rematch", "rematch_accept", "rematch_decline")  # matches/rematch.py
OPS = ENGINE_OPS + PLATFORM_OPS + REMATCH_OPS
IDEMPOTENT_OPS = ("start", "continue", "flag")
OPEN_STATUSES = (Match.Status.WAITING, Match.Status.LIVE)

# Stored in void_reason (English source text); templates translate it when shown.
VOID_OUTAGE = gettext_noop(
    "The server was unreachable for more than three minutes while this match was being "
    "played, so the match is void. Ratings are unchanged."
)
VOID_STAFF = gettext_noop("Staff voided this match after a service fault. Ratings are unchanged.")


def _setting_ms(name: str, default: int) -> int:
    # Tests shorten these (a real match always uses the RULES §7 numbers).
    return int(getattr(settings, name, default))


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

    def __init__(
        self, code: str, message: str, *, version: int | None = None, match_id: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.version = version
        self.match_id = match_id  # the match a ``busy`` player should go back to


class Change:
    """A committed change of one match: its new version and each audience's state frame.

    An audience (``seat0``, ``seat1``, ``device``, ``watch``) gets its view
    (:meth:`view`, made from the row and the state in hand: nothing is read back)
    and the JSON text of its ``state`` frame (:meth:`frame`, docs/protocol.md),
    encoded at most once, when first asked for — once whatever number of sockets
    and processes send it, and not at all for an audience nobody listens to (the
    embedded default's pushes know who listens).
    """

    def __init__(
        self,
        m: Match,
        state: engine.MatchState | None,
        now: int,
        since_seq: int | None,
    ) -> None:
        self.match_id = m.pk
        self.version = m.version
        self.audiences = audiences(m)
        # Made here, on the database thread: a view of a match that is over reads
        # its rematch offer.
        self._views = {a: view_for(m, state, a, now, since_seq=since_seq) for a in self.audiences}
        self._frames: dict[str, str] = {}

    def view(self, audience: str) -> dict[str, Any]:
        """``audience``'s view; shared by whoever asks: do not mutate it."""
        return self._views[audience]

    def frame(self, audience: str) -> str:
        if audience not in self._frames:
            self._frames[audience] = state_frame(self.view(audience))
        return self._frames[audience]

    @property
    def frames(self) -> dict[str, str]:
        """Every audience's frame (made now if not yet)."""
        return {a: self.frame(a) for a in self.audiences}


@dataclass
class Outcome:
    match: Match
    state: engine.MatchState | None
    # Set when the frame was not applied although the match changed (it lost on time).
    error: ServiceError | None = None
    change: Change | None = field(default=None, repr=False)


# --- audiences and frames ---------------------------------------------------------


def audiences(m: Match) -> tuple[str, ...]:
    """The channel audiences of ``m``: each seat (or the one device), and spectators."""
    if m.kind == Match.Kind.SAME_DEVICE:
        return ("device", "watch")
    return ("seat0", "seat1", "watch")


def audience_of(m: Match, user_id: int | None) -> str:
    """Whose view ``user_id`` gets: a seat's, the device's, or a spectator's (``watch``)."""
    seats = m.seats_of(user_id)
    if not seats:
        return "watch"
    return "device" if m.kind == Match.Kind.SAME_DEVICE else f"seat{seats[0]}"


def _seat_for(m: Match, state: engine.MatchState | None, audience: str) -> int | None:
    if audience.startswith("seat"):
        return int(audience[4:])
    # Same device: the seat to act once it has revealed; nobody's hand otherwise.
    if audience == "device" and state is not None and not state.awaiting_reveal:
        return state.to_act
    return None


def view_for(
    m: Match,
    state: engine.MatchState | None,
    audience: str,
    now: int,
    *,
    since_seq: int | None = None,
) -> dict[str, Any]:
    """What ``audience`` sees (docs/protocol.md): the engine's view plus the ``match`` block.

    With ``since_seq`` the view's ``events`` are only those after it (a pushed
    change); without, the recent events (a full view, on connect).
    """
    seat = _seat_for(m, state, audience)
    if state is None:
        view: dict[str, Any] = {"seat": seat, "phase": None, "events": []}
    else:
        view = engine.view_for(state, seat, now, since_seq=since_seq)
    view["events_after"] = since_seq
    view["match"] = {
        "id": m.pk,
        "kind": m.kind,
        "status": m.status,
        "names": m.names(),
        "bots": m.bots(),
        "computer": None
        if m.computer_seat is None
        else {"seat": m.computer_seat, "level": m.computer_level},
        "you": seat if audience != "watch" else None,
        "watching": audience == "watch",
        "ready": list(m.ready),
        "ready_deadline": m.ready_deadline_ms,
        "server_now": now,
        "result": _result(m),
        "version": m.version,
        "void_reason": m.void_reason,
        "rematch": rematch_block(m) if audience != "watch" else None,
        "ratings": m.player_ratings or [None, None],
        "credit": m.last_credit,
        "rating_delta": m.rating_delta,
    }
    return view


def state_frame(view: dict[str, Any]) -> str:
    """The JSON text of a ``state`` frame holding ``view``."""
    return json.dumps(
        {"type": "state", "version": view["match"]["version"], "view": view},
        separators=(",", ":"),
    )


def _result(m: Match) -> dict[str, Any] | None:
    if m.status == Match.Status.FINISHED:
        result: dict[str, Any] = {"winner": m.winner_seat, "end": m.end_reason}
    elif m.status == Match.Status.ABORTED:
        result = {"winner": None, "end": "abort"}
    elif m.status == Match.Status.VOIDED:
        result = {"winner": None, "end": "void", "reason": m.void_reason}
    else:
        return None
    return {**result, **fairplay.result_fields(m)}  # rated, unrated_reason


def rematch_block(m: Match) -> dict[str, Any] | None:
    """The ``rematch`` entry of the view's ``match`` block (see ``matches.rematch``)."""
    if not m.is_over:
        return None
    try:
        offer = m.rematch_offer  # cached on the instance: one query for all views
    except RematchOffer.DoesNotExist:
        offer = None
    if offer is None:
        return {
            "status": "none",
            "offered_by": None,
            "declined": False,
            "new_match": None,
            "expires_at": None,
        }
    status = offer.status
    if status == RematchOffer.Status.OPEN and timezone.now() >= offer.expires_at:
        status = "expired"
    return {
        "status": status,
        "offered_by": offer.offered_by,
        "declined": offer.status == RematchOffer.Status.DECLINED,
        "new_match": offer.new_match_id,
        "expires_at": (
            int(offer.expires_at.timestamp() * 1000)
            if offer.status == RematchOffer.Status.OPEN
            else None
        ),
    }


# --- creating matches ------------------------------------------------------


def _deal(match: Match, hand_no: int) -> engine.Deal:
    seed = getattr(settings, "DEAL_SEED", None)
    if seed is not None:
        return engine.Deal.shuffled(random.Random(f"{seed}:{match.pk}:{hand_no}"))
    return engine.Deal.shuffled(secrets.SystemRandom())


def lock_users(
    user_ids: list[int] | tuple[int, ...], *, skip_locked: bool = False
) -> dict[int, Any]:
    """Lock the users' rows (in id order) and return them; the serializer of match creation.

    Every path that puts a player into a match, or into the queue, takes this
    lock first; the ranked pairing takes it with ``skip_locked`` so it never waits.
    """
    qs = get_user_model().objects.select_for_update(skip_locked=skip_locked)
    return {u.pk: u for u in qs.filter(pk__in=list(user_ids)).order_by("pk")}


def open_matches_of(user_ids: list[int]) -> list[Match]:
    """The waiting or live matches in which any of ``user_ids`` holds a seat."""
    if not user_ids:
        return []
    return list(
        Match.objects.filter(
            Q(player0_id__in=user_ids) | Q(player1_id__in=user_ids), status__in=OPEN_STATUSES
        ).order_by("created_at", "pk")
    )


def busy_user_ids(user_ids: Sequence[int]) -> set[int]:
    """Those of ``user_ids`` who have a waiting or live match (of any kind)."""
    ids = set(user_ids)
    return {
        uid for m in open_matches_of(list(user_ids)) for uid in (m.player0_id, m.player1_id)
    } & ids


def check_free(user: Any, *, opponent: Any = None) -> None:
    """Refuse a new match for a player who is playing one, or has too many waiting.

    Call with the players' row locks held (:func:`lock_users`), so that the
    count cannot change before the new match is committed.
    """
    for who in (user, opponent):
        if who is None:
            continue
        mine = open_matches_of([who.pk])
        live = next((m for m in mine if m.status == Match.Status.LIVE), None)
        if live is not None:
            if who is user:
                raise ServiceError("busy", _("Finish your current match first."), match_id=live.pk)
            raise ServiceError("opponent_busy", _("Your opponent is playing another match now."))
        if len(mine) >= MAX_OPEN_MATCHES:
            if who is user:
                raise ServiceError(
                    "too_many_matches",
                    _("You already have %(n)d matches waiting to start.") % {"n": len(mine)},
                    match_id=mine[0].pk,
                )
            raise ServiceError(
                "opponent_busy", _("Your opponent has too many matches waiting to start.")
            )


def new_match(kind: str, player0: Any, player1: Any = None, guest_name: str = "") -> Match:
    """A new match waiting for both players to press 開始 (inside the caller's transaction)."""
    now = now_ms()
    deadline = now + start_window_ms()
    m = Match(
        kind=kind,
        player0=player0,
        player1=player1,
        guest_name=guest_name,
        ready_deadline_ms=deadline,
        wake_at_ms=deadline,
        player_ratings=[_rating_for_view(p) for p in (player0, player1)],
        player_names=[player0.username, player1.username if player1 is not None else guest_name],
        player_bots=[bool(getattr(p, "plays_as_bot", False)) for p in (player0, player1)],
    )
    for seat, user in enumerate((player0, player1)):
        if getattr(user, "computer_level", None):
            m.computer_seat, m.computer_level = seat, user.computer_level
    _computer_ready(m)
    m.save(force_insert=True)
    _record(m, [{"type": "created", "t": now}])
    return m


def computer_seat(m: Match) -> tuple[int, int] | None:
    """``(seat, level)`` of the site's computer player in ``m``, if one plays."""
    if m.computer_seat is None or not m.computer_level:
        return None
    return m.computer_seat, m.computer_level


def _computer_ready(m: Match) -> None:
    # The computer presses 開始 and 次へ at once: only the person is waited for.
    found = computer_seat(m)
    if found is not None:
        ready = list(m.ready)
        ready[found[0]] = True
        m.ready = ready


def _rating_for_view(user: Any) -> dict[str, Any] | None:
    from ratings.services import rating_of

    if user is None:
        return None
    r = rating_of(user)
    return {"value": r.value, "display": r.display}


def claim_players(users: list[Any]) -> None:
    """Take the players' row locks, check they are free, and take them out of the queue.

    The ranked pairing takes the same locks and re-checks who is busy under
    them, so a pairing committing at the same moment as an invite can never put
    one player into two new matches.
    """
    lock_users([u.pk for u in users])
    check_free(users[0], opponent=users[1] if len(users) > 1 else None)
    ids = [u.pk for u in users]
    if QueueEntry.objects.filter(user_id__in=ids).delete()[0]:
        transaction.on_commit(lambda: queue_left.send(sender=Match, user_ids=ids))


@transaction.atomic
def create_same_device(user: Any, guest_name: str) -> Match:
    """A match for two people at one device; the second seat is a named guest.

    The guest's name obeys the rules of names (``accounts.names``): no
    invisible or control characters in a name the table shows.
    """
    try:
        name = clean_guest_name(guest_name or "")
    except ValidationError as e:
        raise ServiceError("bad_request", e.messages[0]) from None
    claim_players([user])
    from .budgets import check_hourly

    check_hourly(user, "same_device")
    return new_match(Match.Kind.SAME_DEVICE, user, None, name)


@transaction.atomic
def create_invite(user: Any) -> Invite:
    lock_users([user.pk])
    from .budgets import check_hourly

    check_hourly(user, "invite")
    open_invites = Invite.objects.filter(
        creator=user, status=Invite.Status.OPEN, expires_at__gt=timezone.now()
    ).count()
    if open_invites >= MAX_OPEN_INVITES:
        raise ServiceError(
            "too_many_invites",
            _("You have %(n)d open invites: cancel one before making another.")
            % {"n": open_invites},
        )
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
    inv = Invite.objects.select_for_update().select_related("creator").filter(code=code).first()
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
    claim_players([user, inv.creator])
    m = new_match(Match.Kind.CASUAL, inv.creator, user)
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


def _match_query(*, lock: bool = False, skip_locked: bool = False) -> Any:
    qs = Match.objects.select_related("player0", "player1").order_by()
    if lock:
        # of=("self",): player1 is nullable (same device), and PostgreSQL
        # refuses FOR UPDATE on the nullable side of the outer join.
        qs = qs.select_for_update(of=("self",), skip_locked=skip_locked)
    return qs


def locked_match(match_id: int, *, skip_locked: bool = False) -> Match | None:
    """The match, locked until the transaction ends (one statement, compiled once)."""
    sql = _select_sql(connection.vendor, skip_locked)
    return next(iter(Match.objects.raw(sql, [match_id])), None)


# --- the hot path's statements, compiled once ---------------------------------------
#
# Every move runs one SELECT … FOR UPDATE, one UPDATE and one INSERT. Django's
# ORM builds each statement's SQL anew on every call, which cost more than the
# rules engine's whole move; these three are compiled once per database vendor,
# by the ORM itself, and only their parameters change (each value prepared by
# its field, exactly as Model.save and bulk_create prepare it).


@functools.cache
def _select_sql(vendor: str, skip_locked: bool) -> str:
    qs = Match.objects.filter(pk=0).order_by().select_for_update(skip_locked=skip_locked)
    sql, params = qs.query.sql_with_params()
    assert params == (0,), params
    return str(sql)


@functools.cache
def _update_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    fields = tuple(f for f in Match._meta.concrete_fields if not f.primary_key)
    qn = connection.ops.quote_name
    sets = ", ".join(f"{qn(f.column)} = %s" for f in fields)
    pk = qn(Match._meta.pk.column)
    return f"UPDATE {qn(Match._meta.db_table)} SET {sets} WHERE {pk} = %s", fields


@functools.cache
def _insert_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    fields = tuple(f for f in MatchEvent._meta.concrete_fields if not f.primary_key)
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    marks = ", ".join("%s" for _ in fields)
    return f"INSERT INTO {qn(MatchEvent._meta.db_table)} ({cols}) VALUES ({marks})", fields


def _write_row(m: Match) -> None:
    """``m.save()`` of every column, without building the statement again."""
    sql, fields = _update_sql(connection.vendor)
    params = [f.get_db_prep_save(getattr(m, f.attname), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, m.pk])


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
    """Apply one client frame, timed at ``received_at`` (epoch ms, stamped on arrival).

    Rematch ops belong to ``matches.rematch.act_rematch`` (the consumer routes them).
    """
    parsed = parse_frame(frame)
    op = parsed["op"]
    if op in REMATCH_OPS:
        raise ServiceError("bad_request", _("Unknown operation."))
    with transaction.atomic():
        m, seats, state = seated(locked_match(match_id), user)
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
        before = state
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
        change = save_change(m, state, events, before=before, now=received_at)
    return Outcome(m, state, error, change)


def _waiting_op(
    m: Match, seats: list[int], op: str, now: int, events: list[dict[str, Any]]
) -> engine.MatchState | None:
    assert m.ready_deadline_ms is not None
    if now >= m.ready_deadline_ms:
        _abort(m, now, events, blame=_not_ready(m))
        return None
    if op == "resign":
        # Before the first decision leaving is an abort: no result (RULES §1).
        _abort(m, now, events, blame=seats)
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
    held = _rejoin_until(m, state)
    if held is not None and state.to_act in seats:
        state = _rejoin(m, state, now, events)  # its frame proves it is back
        held = None
    # While the seat to act has not come back from our outage its clock cannot
    # run out (the opponent's flag waits for it).
    expired, ev = engine.expire(state, now) if held is None or now >= held else (state, [])
    if ev:
        # The clock ran out before this frame arrived: the frame is not applied.
        events.extend(ev)
        _finish_if_over(m, expired, events)
        return expired
    if op == "flag":
        if state.phase == engine.HAND_OVER:
            return _maybe_auto_continue(m, state, now, events)
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
        raise ServiceError(e.code, _illegal_message(e.code), version=m.version) from None
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
        _computer_ready(m)
        m.ready_deadline_ms = now + continue_window_ms()
    _finish_if_over(m, state, events)
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


def _maybe_auto_continue(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    if m.ready_deadline_ms is not None and now >= m.ready_deadline_ms:
        return _start_next_hand(m, state, now, events)
    return state


def _finish_if_over(m: Match, state: engine.MatchState, events: list[dict[str, Any]]) -> None:
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


def _abort(m: Match, now: int, events: list[dict[str, Any]], *, blame: list[int]) -> None:
    """Abort waiting ``m``; in ranked play the ``blame`` seats are charged a no-show."""
    m.status = Match.Status.ABORTED
    m.end_reason = "abort"
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    events.append({"type": "aborted", "t": now})
    fairplay.record_no_show(m, blame)


def _not_ready(m: Match) -> list[int]:
    return [s for s, r in enumerate(m.ready) if not r]


_ILLEGAL_MESSAGES = {
    "not_your_turn": gettext_noop("It is not your turn."),
    "not_revealed": gettext_noop("Show your hand first."),
    "not_awaiting": gettext_noop("Nothing waits for a reveal."),
    "bad_position": gettext_noop("That position is not open."),
    "no_match": gettext_noop("That tile does not match that end."),
    "not_in_hand": gettext_noop("That tile is not in your hand."),
    "forced_opening": gettext_noop("You must open with the forced tile."),
    "must_place": gettext_noop("You must place a tile (the one you drew, if you drew)."),
    "must_draw": gettext_noop("Draw from the talon."),
    "talon_empty": gettext_noop("The talon is empty."),
    "bad_amount": gettext_noop(
        "Bids are multiples of 5: at least 15, and a raise at least 5 more."
    ),
    "unaffordable": gettext_noop("You cannot afford that bid."),
    "bid_standing": gettext_noop("A bid stands: accept or raise."),
    "no_bid": gettext_noop("There is no bid to accept."),
    "bad_phase": gettext_noop("That is not possible in this phase."),
    "match_over": gettext_noop("The match is over."),
    "timeout": gettext_noop("Your time ran out."),
}


def _illegal_message(code: str) -> str:
    return _(_ILLEGAL_MESSAGES.get(code, gettext_noop("That move is not allowed.")))


# --- saving a change ---------------------------------------------------------------


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
    if deadline is not None and _computer_to_act(m, state) is not None:
        assert state.decision_start is not None
        return min(deadline, state.decision_start + computer_pause()[0])
    held = _rejoin_until(m, state)
    if deadline is not None and held is not None:
        return max(deadline, held)
    return deadline


def _rejoin_until(m: Match, state: engine.MatchState | None) -> int | None:
    """Until when the seat whose decision an outage cut may still come back for it.

    ``None`` once it came back (or acted), or when the decision running is not the
    one the outage cut. Meanwhile its clock cannot run out (:func:`next_wakeup`,
    :func:`_live_op`): the time from the server's return to the seat's is ours.
    """
    credit = m.last_credit
    if not credit or credit.get("rejoin_until") is None or state is None:
        return None
    if state.to_act != credit.get("seat") or state.decision_start != credit.get("start"):
        return None
    return int(credit["rejoin_until"])


def _rejoin(
    m: Match, state: engine.MatchState, now: int, events: list[dict[str, Any]]
) -> engine.MatchState:
    """The cut decision's seat is back at ``now``: give it the time since the server was."""
    until = _rejoin_until(m, state)
    credit = m.last_credit
    if until is None or credit is None:
        return state
    back = int(credit["to"])
    state, ms = engine.credit(state, back, min(now, until))
    m.last_credit = {"ms": int(credit["ms"]) + ms, "seat": credit["seat"], "to": back}
    if ms:
        events.append(
            {
                "type": "credit",
                "from": back,
                "to": back + ms,
                "ms": ms,
                "player": credit["seat"],
                "rejoin": True,
                "t": now,
            }
        )
    return state


def rejoin(match_id: int, user: Any, now: int | None = None) -> bool:
    """A seat's socket is back after an outage: give it back the time it took.

    A no-op (``False``) unless ``user`` holds the seat whose decision the last
    outage cut, that decision still runs, and the seat has not come back yet.
    """
    with transaction.atomic():
        m = locked_match(match_id)
        if m is None or m.is_over or m.status != Match.Status.LIVE or not m.last_credit:
            return False
        state = engine.from_dict(m.state) if m.state is not None else None
        if state is None or _rejoin_until(m, state) is None:
            return False
        if m.last_credit.get("seat") not in m.seats_of(getattr(user, "pk", None)):
            return False
        t = now_ms() if now is None else now
        events: list[dict[str, Any]] = []
        before = state
        state = _rejoin(m, state, t, events)
        if not events:
            m.save(update_fields=["last_credit"])
            return False
        save_change(m, state, events, before=before, now=t)
        return True


def _computer_to_act(m: Match, state: engine.MatchState) -> tuple[int, int] | None:
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
    """``(think_at, release_at)``: ms after the decision began (:data:`COMPUTER_PAUSE_MS`)."""
    lo, hi = getattr(settings, "COMPUTER_PAUSE_MS", COMPUTER_PAUSE_MS)
    return int(lo), int(hi)


def save_change(
    m: Match,
    state: engine.MatchState | None,
    events: list[dict[str, Any]],
    *,
    before: engine.MatchState | None = None,
    now: int | None = None,
) -> Change:
    """Write a change of locked ``m`` (one UPDATE, one INSERT) and publish it after commit.

    ``before`` is the state the change started from: the pushed frames carry
    only the events after it. Must run inside the transaction holding the lock.
    """
    m.state = None if state is None else engine.to_dict(state)
    m.version += 1
    m.wake_at_ms = next_wakeup(m, state)
    _write_row(m)
    _record(m, events)
    since = before.seq if before is not None else None
    change = Change(m, state, now_ms() if now is None else now, since)
    transaction.on_commit(lambda: publish(change))
    return change


def publish(change: Change) -> None:
    """Hand a committed change to whoever pushes it (``matches.broadcast``)."""
    match_changed.send(sender=Match, change=change)


def _record(m: Match, events: list[dict[str, Any]]) -> None:
    """Append ``events`` to the match's log (one INSERT for them all)."""
    if not events:
        return
    sql, fields = _insert_sql(connection.vendor)
    rows = []
    for e in events:
        ev = MatchEvent(
            match_id=m.pk,
            kind=str(e.get("type", "")),
            data=e,
            at_ms=int(e.get("t", 0)),
            version=m.version,
        )
        rows.append([f.get_db_prep_save(getattr(ev, f.attname), connection) for f in fields])
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def record_event(m: Match, event: dict[str, Any]) -> None:
    """Append one platform event (a rematch offer, say) under the match's current version."""
    _record(m, [event])


# --- the sweeper's side: deadlines, outages, lost pushes ---------------------------


def due_matches(until_ms: int, limit: int = 200) -> list[tuple[int, int]]:
    """``(id, version)`` of the matches due to wake up at or before ``until_ms``."""
    return list(
        Match.objects.filter(wake_at_ms__lte=until_ms)
        .order_by("wake_at_ms")
        .values_list("pk", "version")[:limit]
    )


def next_wake_ms() -> int | None:
    """The earliest pending wake-up time (epoch ms), if any."""
    row = (
        Match.objects.filter(wake_at_ms__isnull=False)
        .order_by("wake_at_ms")
        .values_list("wake_at_ms", flat=True)[:1]
    )
    return next(iter(row), None)


def check_match(match_id: int, version: int | None = None, now: int | None = None) -> bool:
    """Whatever must happen by itself at this match's wake-up time; whether anything did.

    Idempotent: a stale ``version`` (the match moved on) or a row locked by a
    frame being applied right now is left alone — the newer version carries its
    own wake-up time. The time is read *after* the lock is held, so a late
    sweep can only find a deadline further in the past: it never lets a late
    move through, and a frame that arrived in time was stamped on arrival and
    is judged by that.
    """
    with transaction.atomic():
        m = locked_match(match_id, skip_locked=True)
        if m is None or (version is not None and m.version != version) or m.is_over:
            return False
        t = now_ms() if now is None else now
        if m.wake_at_ms is None or t < m.wake_at_ms:
            return False  # woke early: the row says when
        events: list[dict[str, Any]] = []
        state = engine.from_dict(m.state) if m.state is not None else None
        before = state
        if m.status == Match.Status.WAITING:
            _abort(m, t, events, blame=_not_ready(m))
        else:
            assert state is not None
            new, ev = engine.expire(state, t)
            if ev:
                events.extend(ev)
                _finish_if_over(m, new, events)
                state = new
            elif state.phase == engine.HAND_OVER:
                state = _maybe_auto_continue(m, state, t, events)
        if not events:
            # Nothing due after all (cannot happen while wake_at_ms is right): recompute it.
            m.wake_at_ms = next_wakeup(m, state)
            m.save(update_fields=["wake_at_ms"])
            return False
        save_change(m, state, events, before=before, now=t)
        return True


@dataclass(frozen=True)
class ComputerTurn:
    """What the computer player needs for one decision: its seat's view, nothing more.

    ``view`` and ``history`` are plain JSON, as a socket would carry them: the
    computer is given a view, never the state (ARCHITECTURE, "Promises").
    """

    match_id: int
    version: int
    seat: int
    level: int
    user_id: int
    view: dict[str, Any]
    history: list[dict[str, Any]]
    release_at: int = 0  # epoch ms: the move is applied then, not before


def computer_turn(match_id: int, version: int, now: int | None = None) -> ComputerTurn | None:
    """The computer's decision due in this match (its pause is over), if any.

    Read without a lock: the decision is applied later through :func:`act`, at
    its own receipt time and version, like anyone's frame (a stale one is refused).
    """
    m = next(iter(_match_query().filter(pk=match_id, version=version)), None)
    if m is None or m.status != Match.Status.LIVE or m.state is None:
        return None
    state = engine.from_dict(m.state)
    found = _computer_to_act(m, state)
    t = now_ms() if now is None else now
    deadline = engine.deadline(state)
    if found is None or deadline is None or t >= deadline:
        return None  # nothing for the computer, or its time is up: the sweep decides
    seat, level = found
    user_id = m.player0_id if seat == 0 else m.player1_id
    assert user_id is not None
    # This hand's events as the seat saw them (a view holds only the recent 16).
    rows = MatchEvent.objects.filter(match_id=m.pk, data__hand=state.hand_no).order_by("id")
    history = [
        engine.event_for({k: v for k, v in e.items() if k not in _NOT_SHOWN}, seat)
        for e in rows.values_list("data", flat=True)
        if "seq" in e
    ]
    view = view_for(m, state, f"seat{seat}", t)
    assert state.decision_start is not None
    return ComputerTurn(
        m.pk,
        m.version,
        seat,
        level,
        user_id,
        json.loads(json.dumps(view)),
        history,
        state.decision_start + computer_pause()[1],
    )


# What the event log keeps for replays but a seat's events never carry.
_NOT_SHOWN = frozenset({"main", "balances", "used", "hands", "forced"})


def credit_outage(start_ms: int, end_ms: int) -> list[int]:
    """The platform could not receive frames from ``start_ms`` to ``end_ms``: nobody pays.

    Every waiting or live match is given the outage back (RULES §8; ARCHITECTURE
    "Time"): a running decision's clock by ``engine.credit``, a start or
    continue window by moving its deadline on. After an outage longer than
    :data:`OUTAGE_VOID_AFTER_MS` a live match is voided instead (no rating
    change). Returns the ids changed. Each match is its own transaction.
    """
    ids = list(
        Match.objects.filter(status__in=OPEN_STATUSES).order_by("pk").values_list("pk", flat=True)
    )
    changed = []
    for pk in ids:
        if _credit_one(pk, start_ms, end_ms):
            changed.append(pk)
    if changed:
        log.warning(
            "outage of %d ms (%d → %d) credited to matches %s",
            end_ms - start_ms,
            start_ms,
            end_ms,
            changed,
        )
    return changed


def _credit_one(match_id: int, start_ms: int, end_ms: int) -> bool:
    with transaction.atomic():
        m = locked_match(match_id)
        if m is None or m.is_over:
            return False
        state = engine.from_dict(m.state) if m.state is not None else None
        if m.status == Match.Status.LIVE and end_ms - start_ms > OUTAGE_VOID_AFTER_MS:
            void_locked(m, state, VOID_OUTAGE, end_ms)
            return True
        event: dict[str, Any] = {"type": "credit", "from": start_ms, "to": end_ms, "t": end_ms}
        before = state
        if state is not None and engine.deadline(state) is not None:
            state, ms = engine.credit(state, start_ms, end_ms)
            event.update(ms=ms, player=state.to_act)
        elif m.ready_deadline_ms is not None and m.ready_deadline_ms > start_ms:
            ms = end_ms - start_ms
            m.ready_deadline_ms += ms
            event.update(ms=ms, player=None, window=True)
        else:
            return False
        if not event["ms"]:
            return False
        m.last_credit = {"ms": event["ms"], "seat": event["player"], "to": end_ms}
        if event["player"] is not None and event["player"] != m.computer_seat:
            # A person's socket must come back too: see OUTAGE_REJOIN_MS.
            m.last_credit.update(
                start=state.decision_start,
                rejoin_until=end_ms + _setting_ms("OUTAGE_REJOIN_MS", OUTAGE_REJOIN_MS),
            )
        save_change(m, state, [event], before=before, now=end_ms)
        return True


def void_locked(m: Match, state: engine.MatchState | None, reason: str, now: int) -> Change:
    """Void the locked live match ``m``: no winner, no rating change, every audience told."""
    m.status = Match.Status.VOIDED
    m.end_reason = "void"
    m.winner_seat = None
    m.finished_at = timezone.now()
    m.ready_deadline_ms = None
    m.void_reason = m.void_reason or reason
    change = save_change(m, state, [{"type": "voided", "reason": m.void_reason, "t": now}])
    log.warning("match %s voided: %s", m.pk, m.void_reason)
    return change


def void_match(match_id: int, reason: str = VOID_STAFF) -> bool:
    """Void one live match (idempotent); whether it was voided now."""
    with transaction.atomic():
        m = locked_match(match_id)
        if m is None or m.status != Match.Status.LIVE:
            return False
        state = engine.from_dict(m.state) if m.state is not None else None
        void_locked(m, state, reason, now_ms())
        return True


def mark_unpushed(match_id: int) -> None:
    """A committed change could not be pushed: the sweeper pushes the match again."""
    Match.objects.filter(pk=match_id).update(needs_push=True)


def repush_pending(limit: int = 100) -> list[int]:
    """Push the current frames of every match whose push failed; returns those pushed."""
    done = []
    for pk, version in Match.objects.filter(needs_push=True).values_list("pk", "version")[:limit]:
        change = current_change(pk)
        if change is None:
            continue
        publish(change)
        # Compare-and-set: a failure of a newer push sets the flag again.
        Match.objects.filter(pk=pk, version=version).update(needs_push=False)
        done.append(pk)
    return done


# --- views -----------------------------------------------------------------


def current_view(match_id: int, user: Any, *, watch: bool = False) -> tuple[Match, dict[str, Any]]:
    """A seat holder's full view (the page, a reconnect); ``ServiceError`` otherwise.

    With ``watch``, anyone else gets the spectators' view (no hand at all, the
    settlement's hands only once a hand is over) instead of ``not_a_player``.
    """
    m = next(iter(_match_query().filter(pk=match_id)), None)
    if m is None:
        raise ServiceError("not_found", _("No such match."))
    if not m.seats_of(getattr(user, "pk", None)) and not watch:
        raise ServiceError("not_a_player", _("You are not playing in this match."))
    state = engine.from_dict(m.state) if m.state is not None else None
    return m, view_for(m, state, audience_of(m, getattr(user, "pk", None)), now_ms())


def watchable() -> list[Match]:
    """The live matches anyone may watch (the lobby's "live now" list), newest first."""
    return list(
        Match.objects.filter(status=Match.Status.LIVE)
        .exclude(kind=Match.Kind.SAME_DEVICE)
        .select_related("player0", "player1")
        .order_by("-started_at")[:20]
    )


def current_change(match_id: int) -> Change | None:
    """Every audience's full frame as the match stands (a push retried after a failure)."""
    m = next(iter(_match_query().filter(pk=match_id)), None)
    if m is None:
        return None
    state = engine.from_dict(m.state) if m.state is not None else None
    return Change(m, state, now_ms(), None)


def live_matches_of(user: Any) -> list[Match]:
    return list(
        Match.objects.filter(
            Q(player0=user) | Q(player1=user),
            status__in=OPEN_STATUSES,
        ).select_related("player0", "player1")
    )
