"""Every change to an arena happens here: join, withdraw, pause, pairing, results, the end.

**Locks.** Everything that changes an arena's entries locks the ``Arena`` row
first (``select_for_update``), then entries; a pass that makes matches then
takes the players' user rows with ``skip_locked`` (``matches.play.seating.lock_users``)
and never waits for them. Join, withdraw and pause take the user row first and
then the arena: they may wait for a pass, never the other way round, so nothing
can deadlock.

**Matches** are made only through ``matches.play.seating``: the user-row locks,
``busy_user_ids`` (a waiting or live match anywhere, checked under those
locks) and ``new_matches`` (all of a pass's matches in a few queries, the
players taken out of the ranked queue). A rated arena
makes ``ranked`` matches, settled by the same Elo (``ratings``) in the
transaction that finishes them; a casual arena makes ``casual`` ones.

**Results** reach the arena through :func:`settle_match_end`, called after
the match's end is committed (``tournaments.hooks``) and, for any end whose
push was lost, by the next pass (:func:`settle_pending`).
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from matches.lobby.matchmaking import rating_for
from matches.models import Match
from matches.play import admission, seating, store

from . import push, scoring
from .models import MAX_MINUTES, MIN_MINUTES, Arena, Entry, Pairing
from .pairing import Waiting, choose_pairs
from .signals import arena_started

log = logging.getLogger(__name__)

# No pairing starts in an arena's last minute: it could not finish in time.
NO_PAIRING_LAST = timedelta(minutes=1)
OVER = (Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.VOIDED)


class ArenaError(Exception):
    """A request that changes nothing; ``code`` is a stable word, ``message`` for people."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def grace() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "ARENA_PAUSE_GRACE_S", 20)))


def rest() -> timedelta:
    """How long after a match ends a player is left out of pairing (ARENA_REST_S)."""
    return timedelta(seconds=float(getattr(settings, "ARENA_REST_S", 6)))


# --- creating ------------------------------------------------------------------


def create_arena(
    name: str, minutes: int, starts_at: datetime, rated: bool, origin: str = Arena.Origin.STAFF
) -> Arena:
    """A new arena; ``ArenaError`` for a bad name or duration (nothing is created)."""
    name = (name or "").strip()
    if not name or len(name) > 80 or not name.isprintable():
        raise ArenaError("bad_name", _("An arena needs a name of 1 to 80 printable characters."))
    if type(minutes) is not int or not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise ArenaError(
            "bad_minutes",
            _("An arena lasts %(lo)d to %(hi)d minutes.") % {"lo": MIN_MINUTES, "hi": MAX_MINUTES},
        )
    return Arena.objects.create(
        name=name, minutes=minutes, starts_at=starts_at, rated=bool(rated), origin=origin
    )


# --- a player's own actions ------------------------------------------------------


def _locked_arena(arena_id: int) -> Arena:
    arena = Arena.objects.select_for_update().filter(pk=arena_id).first()
    if arena is None:
        raise ArenaError("not_found", _("No such arena."), 404)
    return arena


def _bump(arena: Arena) -> None:
    Arena.objects.filter(pk=arena.pk).update(standings_version=F("standings_version") + 1)


def join(arena_id: int, user: Any) -> Entry:
    """Take part (again): a new entry, or a paused or withdrawn one made active.

    Refused after the end (``arena_over``) and, in a rated arena, for a bot
    account (``bot_not_rated``: bots play casual matches only).
    """
    with transaction.atomic():
        locked = seating.lock_users([user.pk]).get(user.pk)
        arena = _locked_arena(arena_id)
        now = timezone.now()
        if arena.phase(now) == "finished":
            raise ArenaError("arena_over", _("This arena is over."), 409)
        if arena.rated and locked is not None and locked.plays_as_bot:
            raise ArenaError(
                "bot_not_rated",
                _("A bot account plays casual arenas only: this arena is rated."),
                403,
            )

        entry = Entry.objects.select_for_update().filter(arena=arena, user_id=user.pk).first()
        if entry is None:
            entry = Entry.objects.create(
                arena=arena, user=user, rating=rating_for(user), last_seen=now, joined_at=now
            )
        else:
            entry.state = Entry.State.ACTIVE
            entry.last_seen = now
            entry.save(update_fields=["state", "last_seen"])
        _bump(arena)
    push.you_after_commit(arena_id, user.pk)
    return entry


def _own_entry(arena_id: int, user: Any) -> tuple[Arena, Entry]:
    arena = _locked_arena(arena_id)
    entry = Entry.objects.select_for_update().filter(arena=arena, user_id=user.pk).first()
    if entry is None:
        raise ArenaError("not_joined", _("You have not joined this arena."), 409)
    return arena, entry


def withdraw(arena_id: int, user: Any) -> Entry:
    """Leave the arena: no more pairings. A match being played still counts when it ends."""
    return _set_state(arena_id, user, Entry.State.WITHDRAWN)


def pause(arena_id: int, user: Any) -> Entry:
    """Take a break: no pairing until the player joins again (points are kept)."""
    return _set_state(arena_id, user, Entry.State.PAUSED)


def _set_state(arena_id: int, user: Any, state: str) -> Entry:
    with transaction.atomic():
        arena, entry = _own_entry(arena_id, user)
        if arena.phase() == "finished":
            raise ArenaError("arena_over", _("This arena is over."), 409)
        if entry.state != state:
            entry.state = state
            entry.save(update_fields=["state"])
            _bump(arena)
    push.you_after_commit(arena_id, user.pk)
    return entry


def touch(arena_id: int, user_id: int) -> bool:
    """The player's arena page (or bot) is here: refresh its presence. Whether it has an entry."""
    return bool(
        Entry.objects.filter(arena_id=arena_id, user_id=user_id).update(last_seen=timezone.now())
    )


def touch_many(held: dict[int, list[int]]) -> int:
    """Refresh the presence of every player in ``held`` (arena id -> user ids): one UPDATE
    an arena. How many entries were refreshed."""
    now = timezone.now()
    return sum(
        Entry.objects.filter(arena_id=arena_id, user_id__in=users).update(last_seen=now)
        for arena_id, users in held.items()
    )


# --- berserk --------------------------------------------------------------------


def berserk(match_id: int, user: Any) -> Pairing:
    """The player halves its own main time for this arena match (before 開始 completes).

    Recorded on the pairing while the match waits for 開始; applied to the
    clock when it starts (:func:`apply_berserk`, through
    ``matches.signals.match_starting``). Refused once the match started.
    """
    with transaction.atomic():
        m = store.locked_match(match_id)
        pairing = Pairing.objects.select_for_update().filter(match_id=match_id).first()
        if m is None or pairing is None:
            raise ArenaError("not_found", _("No such arena match."), 404)
        seats = m.seats_of(user.pk)
        if not seats:
            raise ArenaError("not_a_player", _("You are not playing in this match."), 403)
        if m.status != Match.Status.WAITING:
            raise ArenaError("too_late", _("Berserk is chosen before you press Start."), 409)
        flags = list(pairing.berserk or [False, False])
        if not flags[seats[0]]:
            flags[seats[0]] = True
            pairing.berserk = flags
            pairing.save(update_fields=["berserk"])
        return pairing


def apply_berserk(sender: Any, match: Match, state: Any, **kwargs: Any) -> Any:
    """``match_starting`` receiver: the first state, with the berserk seats' main time halved."""
    import engine

    pairing = Pairing.objects.filter(match_id=match.pk).only("berserk").first()
    if pairing is None:
        return None
    for seat, chosen in enumerate(pairing.berserk or []):
        if chosen and engine.can_berserk(state, seat):
            state = engine.berserk(state, seat)
    return state


# --- the pairing pass ---------------------------------------------------------------


def standings_order(arena_id: int) -> list[int]:
    """The entries' user ids in standings order (rank 1 first)."""
    return list(
        Entry.objects.filter(arena_id=arena_id)
        .order_by("-points", "-rating", "joined_at", "id")
        .values_list("user_id", flat=True)
    )


@dataclass
class PassResult:
    paired: list[int]  # new match ids
    paused: list[int]  # user ids paused for absence
    choose_ms: float = 0.0  # choosing the pairs (in memory)


def pair_arena(arena_id: int, now: datetime | None = None) -> PassResult:
    """One pairing pass: pause the absent, pair the waiting by closeness in the standings."""
    import time

    result = PassResult([], [])
    with transaction.atomic():
        arena = Arena.objects.select_for_update(skip_locked=True).filter(pk=arena_id).first()
        if arena is None:
            return result  # another pass holds it: it does this work
        now = now or timezone.now()
        if arena.phase(now) != "running" or now >= arena.ends_at - NO_PAIRING_LAST:
            return result
        entries = list(
            Entry.objects.filter(arena=arena, state=Entry.State.ACTIVE, current_match__isnull=True)
            .filter(Q(free_at__isnull=True) | Q(free_at__lte=now))
            .only("id", "user_id", "last_seen", "last_opponent_id")
        )
        cutoff = now - grace()
        absent = [e for e in entries if e.last_seen < cutoff]
        if absent:
            # Still absent at the write: a page that came back meanwhile keeps its place.
            Entry.objects.filter(pk__in=[e.pk for e in absent], last_seen__lt=cutoff).update(
                state=Entry.State.PAUSED
            )
            result.paused = [e.user_id for e in absent]
            _bump(arena)
        present = [e for e in entries if e.last_seen >= cutoff]
        if len(present) < 2:
            return result
        # Every candidate's user row at once, never waiting for one (a player being
        # put into a match elsewhere right now is simply left for the next pass);
        # then, under those locks, who has a waiting or live match anywhere.
        users = seating.lock_users([e.user_id for e in present], skip_locked=True)
        if arena.rated:  # an account that became a bot since joining plays casual only
            users = {uid: u for uid, u in users.items() if not u.plays_as_bot}
        busy = seating.busy_user_ids(list(users))
        t0 = time.perf_counter()
        rank = {uid: i for i, uid in enumerate(standings_order(arena.pk), 1)}
        by_user = {e.user_id: e for e in present if e.user_id in users and e.user_id not in busy}
        pairs = choose_pairs(
            [Waiting(uid, rank.get(uid, 10**6), e.last_opponent_id) for uid, e in by_user.items()]
        )
        result.choose_ms = (time.perf_counter() - t0) * 1000
        if pairs:
            kind = Match.Kind.RANKED if arena.rated else Match.Kind.CASUAL
            made = _make_matches(
                arena, kind, [(by_user[a.user_id], by_user[b.user_id]) for a, b in pairs], users
            )
            result.paired = [m.pk for m in made]
            _bump(arena)
    for uid in result.paused:
        push.you_after_commit(arena_id, uid)
    return result


def _make_matches(
    arena: Arena, kind: str, pairs: list[tuple[Entry, Entry]], users: dict[int, Any]
) -> list[Match]:
    """The pass's matches, made at once (``seating.new_matches``: a fixed number of
    queries however many). Every player's user row is locked and none is busy."""
    seats = []
    for a, b in pairs:
        p0, p1 = users[a.user_id], users[b.user_id]
        seats.append((p1, p0) if secrets.randbelow(2) else (p0, p1))
    made = seating.new_matches(kind, seats)
    Pairing.objects.bulk_create(
        [
            Pairing(arena=arena, match=m, user0=p0, user1=p1, berserk=[False, False])
            for m, (p0, p1) in zip(made, seats, strict=True)
        ]
    )
    _seat_entries(
        [
            row
            for m, (a, b) in zip(made, pairs, strict=True)
            for row in ((a.pk, m.pk, b.user_id), (b.pk, m.pk, a.user_id))
        ]
    )
    push.paired_after_commit(
        arena.pk, [(m.pk, [a.user_id, b.user_id]) for m, (a, b) in zip(made, pairs, strict=True)]
    )
    return made


def _seat_entries(rows: list[tuple[int, int, int]]) -> None:
    """Each ``(entry id, match id, opponent's user id)``: one UPDATE for them all.

    ``bulk_update`` would say the same with a CASE per column, but building its
    expressions cost ~1.5 ms an entry (66 of a 180 ms pass making 20 matches);
    ``UPDATE … FROM`` is understood by PostgreSQL and SQLite (3.33+).
    """
    table = Entry._meta.db_table
    match_col = Entry._meta.get_field("current_match").column
    opp_col = Entry._meta.get_field("last_opponent").column
    # A SELECT … UNION ALL per row names its columns in both (SQLite's VALUES cannot).
    values = " UNION ALL ".join(["SELECT %s AS e, %s AS m, %s AS o"] * len(rows))
    with connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{table}" SET "{match_col}" = v.m, "{opp_col}" = v.o '
            f'FROM ({values}) AS v WHERE "{table}"."id" = v.e',
            [x for row in rows for x in row],
        )


# --- results ---------------------------------------------------------------------


def settle_match_end(match_id: int) -> bool:
    """Count an arena match's end (once); whether anything changed.

    Counted: a finished match with a winner that ended before the arena did.
    Not counted: a void, an abort, and any end at or after the arena's end.
    An abort pauses whoever had not pressed 開始 (absent players are never
    paired again into a forfeit).
    """
    arena_id = (
        Pairing.objects.filter(match_id=match_id, settled=False)
        .values_list("arena_id", flat=True)
        .first()
    )
    if arena_id is None:
        return False
    with transaction.atomic():
        arena = Arena.objects.select_for_update().get(pk=arena_id)
        p = (
            Pairing.objects.select_for_update()
            .select_related("match")
            .filter(match_id=match_id, settled=False)
            .first()
        )
        if p is None or not p.match.is_over:
            return False
        m = p.match
        uids = [p.user0_id, p.user1_id]
        entries = {
            e.user_id: e
            for e in Entry.objects.select_for_update().filter(arena=arena, user_id__in=uids)
        }
        counted = (
            m.status == Match.Status.FINISHED
            and m.winner_seat in (0, 1)
            and not arena.finished
            and m.finished_at is not None
            and m.finished_at < arena.ends_at
        )
        points = [0, 0]
        now = timezone.now()
        for seat, uid in enumerate(uids):
            e = entries.get(uid)
            if e is None:
                continue
            if counted:
                result = scoring.WIN if m.winner_seat == seat else scoring.LOSS
                berserked = bool((p.berserk or [False, False])[seat])
                s = scoring.score(result, e.streak, berserk=berserked)
                e.points += s.points
                e.streak = s.streak
                e.played += s.played
                e.wins += int(s.win)
                points[seat] = s.points
            elif m.status == Match.Status.ABORTED and not (m.ready or [False, False])[seat]:
                e.state = Entry.State.PAUSED if e.state == Entry.State.ACTIVE else e.state
            if e.current_match_id == m.pk:
                e.current_match = None
            # Back from a match: the grace period before a pause starts now, and a
            # short rest before the next pairing (to see the result, get back).
            e.last_seen = max(e.last_seen, now)
            e.free_at = now + rest()
            fields = ["points", "streak", "played", "wins", "state", "current_match"]
            e.save(update_fields=[*fields, "last_seen", "free_at"])
        p.settled, p.counted, p.points = True, counted, points
        p.save(update_fields=["settled", "counted", "points"])
        _bump(arena)
    for uid in uids:
        push.you_after_commit(arena_id, uid)
    return True


def settle_pending(arena_id: int) -> list[int]:
    """Settle every arena match that ended but was not counted yet (a lost hook)."""
    ids = list(
        Pairing.objects.filter(
            arena_id=arena_id, settled=False, match__status__in=OVER
        ).values_list("match_id", flat=True)
    )
    return [mid for mid in ids if settle_match_end(mid)]


def finish_arena(arena_id: int, now: datetime | None = None) -> bool:
    """At the end: count what ended in time, fix the final ranks. Idempotent."""
    now = now or timezone.now()
    if (
        Arena.objects.filter(pk=arena_id, finished=False)
        .values_list("starts_at", "minutes")
        .first()
        is None
    ):
        return False
    arena = Arena.objects.get(pk=arena_id)
    if now < arena.ends_at:
        return False
    settle_pending(arena_id)  # what ended in time counts
    with transaction.atomic():
        arena = Arena.objects.select_for_update().get(pk=arena_id)
        if arena.finished or now < arena.ends_at:
            return False
        for rank, uid in enumerate(standings_order(arena.pk), 1):
            Entry.objects.filter(arena=arena, user_id=uid).update(final_rank=rank)
        arena.finished = True
        arena.save(update_fields=["finished"])
        _bump(arena)
    log.info("arena %s finished", arena_id)
    return True


# --- the periodic work ------------------------------------------------------------


def live_arena_ids(now: datetime | None = None) -> list[int]:
    """Arenas running now, or over but not yet finished."""
    now = now or timezone.now()
    return list(
        Arena.objects.filter(finished=False, starts_at__lte=now).values_list("pk", flat=True)
    )


def announce_start(arena_id: int) -> list[int]:
    """Tell the arena's players that it has started, once (compare-and-set on the row)."""
    with transaction.atomic():
        if not Arena.objects.filter(pk=arena_id, start_announced=False).update(
            start_announced=True
        ):
            return []
        user_ids = list(
            Entry.objects.filter(arena_id=arena_id)
            .exclude(state=Entry.State.WITHDRAWN)
            .values_list("user_id", flat=True)
        )
        arena_started.send(sender=Arena, arena_id=arena_id, user_ids=user_ids)
    return user_ids


def pairing_pass(now: datetime | None = None) -> dict[int, PassResult]:
    """Every few seconds: for each live arena, late results, the end, then pairing."""
    out = {}
    now = now or timezone.now()
    for arena_id in live_arena_ids(now):
        announce_start(arena_id)
        settle_pending(arena_id)  # an end whose hook was lost (a crash after the commit)
        if finish_arena(arena_id, now):
            continue
        if admission.tier_saturated():  # new matches wait, like the queue's (play/admission)
            admission.refuse("arena_pairing", "saturated")
            continue
        out[arena_id] = pair_arena(arena_id, now)
    return out
