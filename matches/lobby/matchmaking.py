"""The ranked queue: join, leave, presence, and pairing two waiting players.

**The rating window.** A player who has waited ``w`` seconds accepts opponents
whose rating differs by at most ``100 + 50 * floor(w / 10)``; from 60 s on, by
any amount (:func:`window_at`: ±100 at 0 s, ±150 at 10 s, ±350 at 50 s, ±∞ at
60 s). Two players fit when their difference is within the window of **the one
who has waited longer** (the earlier ``joined_at``), so a player who has waited a
minute is paired with the next person to arrive, whatever their rating. The
window is computed from ``joined_at`` and ``now`` only, never stored, so tests
move it with ``time_machine``.

**Choosing pairs** (:func:`choose_pairs`, pure): the longest-waiting player
first; among those who fit, anyone but the opponent either of them just played
(``last_opponent``, found at join) and anyone they already had their rated
matches of the day with (``matches.play.fairplay.spent_pairs``: such a match
would be unrated) is preferred; those are taken only when nobody else fits.
Among the preferred, the closest rating wins, then the longer wait. Seats are
drawn at random. Two players one of whom blocked the other are never paired
(:data:`KEEP_APART`, filled by ``social``).

**Why two players never end up in two matches.** Pairing
(:func:`pair_waiting`) is one transaction that first locks *every* queue entry
(``select_for_update`` ordered by ``joined_at, id``: every pairing locks in the
same order, so two cannot deadlock, and a second pairing waits for the first
and then finds the paired entries gone). Inside it, each chosen pair's user
rows are locked (``skip_locked``: a pair whose user another transaction holds
is simply tried at the next sweep; pairing never waits for a user lock, so it
cannot deadlock with :func:`join` or a rematch, which take the user lock first)
and only then is it checked that neither has a waiting or live match. Anything
else that creates a match for a player (a rematch here; an invite should too)
takes the same user-row lock first, so that check sees its committed match.
Pairing runs right after every join commits (so a concurrent join is visible)
and in a periodic sweep: ``matches.tasks.matchmaking_sweep`` every 2 s on Celery
beat, or the embedded asyncio loop (``matches.realtime.periodic``).

**Presence.** The lobby socket (``matches.realtime.lobby_consumer``) stamps
``last_seen`` on connect, every 10 s while open, on ``ping`` frames and on
disconnect. The sweep drops entries not seen for 30 s (:data:`PRESENCE_TIMEOUT`):
a player whose lobby connection is gone for 30 s leaves the queue. It also drops
the entries of players who meanwhile got a match some other way.

**Pushes** (after the commit, over the per-user group ``lobby.user.<id>``):
``{"type": "queue.update", "status": {...}}`` whenever a player's queue state
changes (see :func:`status_of` for the shape) and
``{"type": "queue.paired", "match_id": id, "url": "/matches/<id>/"}`` to both
players of a new pair, which their lobby pages follow at once.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from matches import signals
from matches.lobby import budgets
from matches.models import Match, QueueEntry
from matches.play import fairplay
from matches.play.errors import ServiceError
from matches.play.seating import busy_error, busy_user_ids, lock_users, new_match

log = logging.getLogger(__name__)

DEFAULT_RATING = 1500
WINDOW_START = 100  # rating points either side, at 0 s
WINDOW_STEP = 50  # added every WINDOW_EVERY_S seconds waited
WINDOW_EVERY_S = 10
UNBOUNDED_AFTER_S = 60
PRESENCE_TIMEOUT = timedelta(seconds=30)

# Pairs that must never meet, given the waiting players' ids: ``social``
# registers its blocks here (matches never imports the apps above it).
KEEP_APART: list[Callable[[Sequence[int]], set[frozenset[int]]]] = []


# --- the window --------------------------------------------------------------


def window_at(waited_s: float) -> int | None:
    """The half-width of the rating window after ``waited_s`` seconds; ``None`` is unbounded.

    >>> [window_at(s) for s in (0, 9.9, 10, 50, 59.9, 60)]
    [100, 100, 150, 350, 350, None]
    """
    if waited_s >= UNBOUNDED_AFTER_S:
        return None
    return WINDOW_START + WINDOW_STEP * int(max(0.0, waited_s) // WINDOW_EVERY_S)


def window_for(joined_at: datetime, now: datetime) -> int | None:
    return window_at((now - joined_at).total_seconds())


def fits(a: QueueEntry, b: QueueEntry, now: datetime) -> bool:
    """Whether ``a`` and ``b`` may be paired at ``now`` (never a player with themselves)."""
    if a.user_id == b.user_id:
        return False
    w = window_for(min(a.joined_at, b.joined_at), now)
    return w is None or abs(a.rating - b.rating) <= w


def choose_pairs(
    entries: Sequence[QueueEntry],
    now: datetime,
    avoid: set[frozenset[int]] | None = None,
    apart: set[frozenset[int]] | None = None,
) -> list[tuple[QueueEntry, QueueEntry]]:
    """Pair the waiting players (pure; ``entries`` in any order; never a pair in ``apart``)."""
    remaining = sorted(entries, key=lambda e: (e.joined_at, e.pk or 0))
    pairs = []
    apart = apart or set()
    while remaining:
        a = remaining.pop(0)
        fitting = [
            b
            for b in remaining
            if fits(a, b, now) and frozenset((a.user_id, b.user_id)) not in apart
        ]
        if not fitting:
            continue
        fresh = [
            b
            for b in fitting
            if b.user_id != a.last_opponent_id
            and a.user_id != b.last_opponent_id
            and frozenset((a.user_id, b.user_id)) not in (avoid or ())
        ]
        b = min(fresh or fitting, key=lambda b: (abs(a.rating - b.rating), b.joined_at, b.pk or 0))
        remaining.remove(b)
        pairs.append((a, b))
    return pairs


# --- reading ---------------------------------------------------------------------


def rating_for(user: Any) -> int:
    """The player's current Elo rating (``ratings.services.rating_of``), 1500 without it."""
    try:
        from ratings.services import rating_of
    except ImportError:  # the ratings app is optional for the queue
        return DEFAULT_RATING
    r = rating_of(user)
    return int(getattr(r, "value", r))


def last_opponent_of(user: Any) -> int | None:
    """The other player of ``user``'s most recent match against an account, if any."""
    m = (
        Match.objects.filter(Q(player0=user) | Q(player1=user), player1__isnull=False)
        .exclude(player0_id=user.pk, player1_id=user.pk)
        .order_by("-created_at", "-id")
        .values_list("player0_id", "player1_id")
        .first()
    )
    if m is None:
        return None
    return m[1] if m[0] == user.pk else m[0]


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def window_text(w: int | None) -> str:
    return "±∞" if w is None else f"±{w}"


def status_of(user: Any, now: datetime | None = None) -> dict[str, Any]:
    """The queue state the lobby shows (also the ``status`` of ``queue.update`` pushes).

    ``{"in_queue": bool, "rating": 1500, "joined_at": ms | None,
    "waited_ms": int | None, "window": 150 | None (unbounded or not queued),
    "window_text": "±150", "server_now": ms, "schedule": {...}}``
    """
    now = now or timezone.now()
    entry = QueueEntry.objects.filter(user_id=user.pk).first()
    until = fairplay.cooldown_until(user, now)
    out: dict[str, Any] = {
        "in_queue": entry is not None,
        # A no-show cooldown running now: when it ends (epoch ms), else None.
        "cooldown_until": None if until is None else _ms(until),
        "cooldown_text": "" if until is None else timezone.localtime(until).strftime("%H:%M:%S"),
        "server_now": _ms(now),
        "schedule": {
            "start": WINDOW_START,
            "step": WINDOW_STEP,
            "every_s": WINDOW_EVERY_S,
            "unbounded_after_s": UNBOUNDED_AFTER_S,
        },
    }
    if entry is None:
        out.update(
            rating=rating_for(user), joined_at=None, waited_ms=None, window=None, window_text=""
        )
    else:
        w = window_for(entry.joined_at, now)
        out.update(
            rating=entry.rating,
            joined_at=_ms(entry.joined_at),
            waited_ms=max(0, _ms(now) - _ms(entry.joined_at)),
            window=w,
            window_text=window_text(w),
        )
    return out


# --- pushes ----------------------------------------------------------------------


def lobby_group(user_id: int) -> str:
    return f"lobby.user.{user_id}"


def _send(user_id: int, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(lobby_group(user_id), message)
    except Exception:  # a push is a courtesy: the database is the truth
        log.exception("lobby push to user %s failed", user_id)


def _push_status_after_commit(user_id: int) -> None:
    def push() -> None:
        user = get_user_model().objects.filter(pk=user_id).first()
        if user is not None:
            _send(user_id, {"type": "queue.update", "status": status_of(user)})

    transaction.on_commit(push)


def on_queue_left(sender: Any, user_ids: Sequence[int], **kwargs: Any) -> None:
    """Players who got a match elsewhere left the queue: their lobby pages are told."""
    for uid in user_ids:
        user = get_user_model().objects.filter(pk=uid).first()
        if user is not None:
            _send(uid, {"type": "queue.update", "status": status_of(user)})


def unstarted_pair(user: Any) -> dict[str, Any] | None:
    """The ``paired`` frame of a ranked match still waiting for ``user``'s 開始, if any.

    A lobby socket that opens (or reopens) after its player was paired missed the
    push; without this the player would sit in the lobby until the start window
    closed and be charged a no-show for it.
    """
    m = (
        Match.objects.filter(
            Q(player0_id=user.pk) | Q(player1_id=user.pk),
            kind=Match.Kind.RANKED,
            status=Match.Status.WAITING,
        )
        .order_by("-created_at")
        .first()
    )
    if m is None or all(m.ready[s] for s in m.seats_of(user.pk)):
        return None
    return {"type": "paired", "match_id": m.pk, "url": reverse("matches:match", args=[m.pk])}


def _push_paired_after_commit(match_id: int, user_ids: Sequence[int]) -> None:
    url = reverse("matches:match", args=[match_id])

    def push() -> None:
        for uid in user_ids:
            _send(uid, {"type": "queue.paired", "match_id": match_id, "url": url})
        signals.ranked_paired.send(sender=Match, match_id=match_id, user_ids=list(user_ids))

    transaction.on_commit(push)


# --- writing ---------------------------------------------------------------------


lock_users = lock_users


@dataclass
class JoinResult:
    entry: QueueEntry | None
    match: Match | None  # set when the join paired the player at once


def join(user: Any, *, pair: bool = True) -> JoinResult:
    """Put ``user`` in the ranked queue (idempotent), then try to pair at once.

    Refused (``ServiceError("busy")``) while the player has a waiting or live match,
    always for a bot account (``bot_not_ranked``: bots play casual matches only),
    during a no-show cooldown (``cooldown``, ``matches.play.fairplay``) and over the
    joins-per-minute budget (``rate_limited``, ``matches.lobby.budgets``).
    """
    budgets.check_queue_join(user)
    with transaction.atomic():
        locked = lock_users([user.pk]).get(user.pk)
        if locked is not None and locked.plays_as_bot:  # read under the lock: see become_bot
            raise ServiceError(
                "bot_not_ranked",
                _("A bot account plays casual matches only: it cannot join the ranked queue."),
            )
        until = fairplay.cooldown_until(user)
        if until is not None:
            raise budgets.Limited(
                _("You left ranked matches before they started: you can join again at %(at)s.")
                % {"at": timezone.localtime(until).strftime("%H:%M:%S")},
                _ms(until),
                code="cooldown",
            )
        if (busy := busy_error(user.pk, mine=True, waiting_ok=False)) is not None:
            raise busy
        now = timezone.now()
        entry = QueueEntry.objects.filter(user_id=user.pk).first()
        if entry is None:
            entry = QueueEntry.objects.create(
                user=user,
                rating=rating_for(user),
                joined_at=now,
                last_seen=now,
                last_opponent_id=last_opponent_of(user),
            )
        else:
            entry.last_seen = now
            entry.save(update_fields=["last_seen"])
        _push_status_after_commit(user.pk)
    # A separate transaction, after the commit: a player joining at the same
    # moment is then visible to one of the two pairings.
    match = None
    if pair:
        for m in pair_waiting():
            if user.pk in (m.player0_id, m.player1_id):
                match = m
    return JoinResult(entry, match)


@transaction.atomic
def leave(user: Any) -> bool:
    """Take ``user`` out of the queue; whether they were in it."""
    deleted, _n = QueueEntry.objects.filter(user_id=user.pk).delete()
    _push_status_after_commit(user.pk)
    return bool(deleted)


def touch(user: Any) -> bool:
    """The lobby connection is alive: refresh ``last_seen`` (a no-op outside the queue)."""
    return bool(QueueEntry.objects.filter(user_id=user.pk).update(last_seen=timezone.now()))


def pair_waiting(now: datetime | None = None) -> list[Match]:
    """Drop stale and busy entries, pair whoever fits, return the new matches.

    One transaction; see the module docstring for why nobody lands in two matches.
    """
    made: list[Match] = []
    with transaction.atomic():
        now = now or timezone.now()
        entries = list(QueueEntry.objects.select_for_update().order_by("joined_at", "id"))
        if not entries:
            return made
        gone = {e.pk for e in entries if e.last_seen < now - PRESENCE_TIMEOUT}
        busy = busy_user_ids([e.user_id for e in entries])
        drop = [e for e in entries if e.pk in gone or e.user_id in busy]
        if drop:
            QueueEntry.objects.filter(pk__in=[e.pk for e in drop]).delete()
            for e in drop:
                _push_status_after_commit(e.user_id)
        waiting = [e for e in entries if e not in drop]
        ids = [e.user_id for e in waiting]
        apart = set().union(*(hook(ids) for hook in KEEP_APART)) if KEEP_APART else set()
        avoid = fairplay.spent_pairs(ids, now)
        for a, b in choose_pairs(waiting, now, avoid, apart):
            users = lock_users([a.user_id, b.user_id], skip_locked=True)
            if len(users) < 2:
                continue  # someone else holds a user: the next sweep tries again
            # Checked again under the user locks: a match made meanwhile is committed now.
            if busy_user_ids([a.user_id, b.user_id]):
                continue  # the next pairing drops the busy one's entry
            p0, p1 = users[a.user_id], users[b.user_id]
            if secrets.randbelow(2):
                p0, p1 = p1, p0
            m = new_match(Match.Kind.RANKED, p0, p1)
            QueueEntry.objects.filter(pk__in=[a.pk, b.pk]).delete()
            _push_paired_after_commit(m.pk, [a.user_id, b.user_id])
            made.append(m)
    for m in made:
        log.info("ranked pair: match %s", m.pk)
    return made


def sweep(now: datetime | None = None) -> list[Match]:
    """The periodic pass (every 2 s): presence timeouts, busy players, and pairing."""
    from matches.play import admission

    if admission.tier_saturated():
        admission.refuse("queue_pairing", "saturated")  # they wait in the queue meanwhile
        return []
    return pair_waiting(now)
