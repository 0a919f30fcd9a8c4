"""Who is free to play, and new matches: the players' row locks serialize both.

The one "busy" check (:func:`check_free`) for invites, the computer, the
ranked queue and rematches; :func:`claim_players` takes the players out of
the queue (and tells their lobbies) when a new match takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from matches import conf
from matches.models import Match, QueueEntry
from matches.play import timing
from matches.play.errors import ServiceError
from matches.play.store import record_events, record_events_of
from matches.play.timing import computer_ready
from matches.signals import queue_left

OPEN_STATUSES = (Match.Status.WAITING, Match.Status.LIVE)


MAX_OPEN_MATCHES = 3


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


def busy_error(user_id: int, *, mine: bool, waiting_ok: bool = True) -> ServiceError | None:
    """Why the player cannot be put into one more match now, or ``None``: the one busy check.

    A player in a live match is busy. With ``waiting_ok`` (invites, same device,
    the computer) up to :data:`MAX_OPEN_MATCHES` waiting ones are allowed; the
    ranked queue and rematches allow none. ``mine``: said to that player
    (``busy``, with the match to go back to), else to the opponent (``opponent_busy``).
    """
    found = open_matches_of([user_id])
    live = next((m for m in found if m.status == Match.Status.LIVE), None)
    if live is not None or (found and not waiting_ok):
        if mine:
            back = live or found[0]
            return ServiceError("busy", _("Finish your current match first."), match_id=back.pk)
        return ServiceError("opponent_busy", _("Your opponent is playing another match now."))
    if len(found) >= MAX_OPEN_MATCHES:
        if mine:
            return ServiceError(
                "too_many_matches",
                _("You already have %(n)d matches waiting to start.") % {"n": len(found)},
                match_id=found[0].pk,
            )
        return ServiceError(
            "opponent_busy", _("Your opponent has too many matches waiting to start.")
        )
    return None


def check_free(user: Any, *, opponent: Any = None, waiting_ok: bool = True) -> None:
    """Refuse a new match for a player (then the opponent) who is busy (:func:`busy_error`).

    Call with the players' row locks held (:func:`lock_users`), so that the
    count cannot change before the new match is committed.
    """
    for who, mine in ((user, True), (opponent, False)):
        if who is not None and (error := busy_error(who.pk, mine=mine, waiting_ok=waiting_ok)):
            raise error


def new_match(kind: str, player0: Any, player1: Any = None, guest_name: str = "") -> Match:
    """A new match waiting for both players to press 開始 (inside the caller's transaction)."""
    now = timing.now_ms()
    m = _unsaved(now, kind, player0, player1, guest_name, _ratings_for_view([player0, player1]))
    m.save(force_insert=True)
    record_events(m, [{"type": "created", "t": now}])
    return m


def new_matches(kind: str, pairs: Sequence[tuple[Any, Any]]) -> list[Match]:
    """Many new matches at once (an arena's pairing pass): a fixed number of queries.

    The caller holds every player's row lock (:func:`lock_users`) and has left out,
    under those locks, everyone :func:`busy_user_ids` names; each player is in one
    pair. Takes them all out of the ranked queue, like :func:`claim_players`.
    """
    if not pairs:
        return []
    ids = [u.pk for pair in pairs for u in pair]
    assert len(set(ids)) == len(ids), "a player in two new matches"
    leave_queue(ids)
    shown = _ratings_for_view([u for pair in pairs for u in pair])
    now = timing.now_ms()
    made = [_unsaved(now, kind, p0, p1, "", shown) for p0, p1 in pairs]
    Match.objects.bulk_create(made)
    record_events_of([(m, [{"type": "created", "t": now}]) for m in made])
    return made


def _unsaved(
    now: int,
    kind: str,
    player0: Any,
    player1: Any,
    guest_name: str,
    shown: dict[int, dict[str, Any]],
) -> Match:
    deadline = now + conf.start_window_ms()
    m = Match(
        kind=kind,
        player0=player0,
        player1=player1,
        guest_name=guest_name,
        ready_deadline_ms=deadline,
        wake_at_ms=deadline,
        player_ratings=[shown.get(p.pk) if p is not None else None for p in (player0, player1)],
        player_names=[player0.username, player1.username if player1 is not None else guest_name],
        player_bots=[bool(getattr(p, "plays_as_bot", False)) for p in (player0, player1)],
    )
    for seat, user in enumerate((player0, player1)):
        if getattr(user, "computer_level", None):
            m.computer_seat, m.computer_level = seat, user.computer_level
    computer_ready(m)
    return m


def _ratings_for_view(users: Sequence[Any]) -> dict[int, dict[str, Any]]:
    """The rating each player's bar shows, by user id (one query for them all)."""
    from ratings.services import ratings_of

    return {
        pk: {"value": r.value, "display": r.display}
        for pk, r in ratings_of([u.pk for u in users if u is not None]).items()
    }


def claim_players(users: list[Any], *, waiting_ok: bool = True) -> None:
    """Take the players' row locks, check they are free, and take them out of the queue.

    Every path into a new match comes here (invites, same device, the computer,
    rematches, the ranked pairing), so a queued player's lobby always hears that
    it left the queue (``queue_left``). The ranked pairing takes the same locks
    and re-checks who is busy under them, so a pairing committing at the same
    moment as an invite can never put one player into two new matches.
    """
    lock_users([u.pk for u in users])
    check_free(users[0], opponent=users[1] if len(users) > 1 else None, waiting_ok=waiting_ok)
    leave_queue([u.pk for u in users])


def leave_queue(user_ids: list[int]) -> None:
    """Take the players out of the ranked queue; their lobbies hear it after the commit."""
    queued = QueueEntry.objects.filter(user_id__in=user_ids)
    if len(user_ids) > 2:  # an arena's whole pass: tell only the lobbies of the queued
        user_ids = list(queued.values_list("user_id", flat=True))
        queued = QueueEntry.objects.filter(user_id__in=user_ids)
    if user_ids and queued.delete()[0]:
        transaction.on_commit(lambda: queue_left.send(sender=Match, user_ids=user_ids))


def watchable() -> list[Match]:
    """The live matches anyone may watch (the lobby's "live now" list), newest first."""
    return list(
        Match.objects.filter(status=Match.Status.LIVE)
        .exclude(kind=Match.Kind.SAME_DEVICE)
        .select_related("player0", "player1")
        .order_by("-started_at")[:20]
    )


def live_matches_of(user: Any) -> list[Match]:
    return list(
        Match.objects.filter(
            Q(player0=user) | Q(player1=user),
            status__in=OPEN_STATUSES,
        ).select_related("player0", "player1")
    )
