"""Reading arenas: the standings table, one player's own state, the lists.

Ranks are places in the order points, then rating at join, then who joined
first (the table shows each player's rating now): every player has a distinct
rank (1, 2, 3 ...), so the podium is fixed.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Min, Q, Window
from django.utils import timezone

from .models import Arena, Entry
from .scoring import on_fire


def _ms(dt: Any) -> int:
    return int(dt.timestamp() * 1000)


def row_of(rank: int, e: dict[str, Any]) -> dict[str, Any]:
    return {
        "rank": rank,
        "username": e["user__username"],
        # The rating now (a rated arena's matches move it), else the one at join.
        "rating": e.get("user__player_rating__rating") or e["rating"],
        "points": e["points"],
        "streak": e["streak"],
        "fire": on_fire(e["streak"]),
        "played": e["played"],
        "wins": e["wins"],
        "state": e["state"],
        "playing": e["current_match_id"] is not None,
    }


def rows(arena_id: int) -> list[dict[str, Any]]:
    """The whole table, rank 1 first (one query)."""
    qs = (
        Entry.objects.filter(arena_id=arena_id)
        .order_by("-points", "-rating", "joined_at", "id")
        .values(
            "user__username",
            "user__player_rating__rating",
            "rating",
            "points",
            "streak",
            "played",
            "wins",
            "state",
            "current_match_id",
        )
    )
    return [row_of(i, e) for i, e in enumerate(qs, 1)]


def summary(arena: Arena, now: Any = None) -> dict[str, Any]:
    now = now or timezone.now()
    return {
        "id": arena.pk,
        "name": arena.name,
        "starts_at": _ms(arena.starts_at),
        "ends_at": _ms(arena.ends_at),
        "minutes": arena.minutes,
        "rated": arena.rated,
        "phase": arena.phase(now),
        "server_now": _ms(now),
        "time_control": {"main_s": 120, "delay_s": 10, "berserk_main_s": 60},
    }


def table(arena_id: int) -> dict[str, Any]:
    """The ``arena.standings`` push: the arena and its whole table (sockets cut it down)."""
    arena = Arena.objects.get(pk=arena_id)
    return {"arena": summary(arena), "standings": _rows_at(arena)}


# arena id -> (standings version, its rows): the table read once per version in a
# process, however many arena pages open meanwhile. Every change to a row moves the
# version (services._bump); the version is read before the rows, so rows kept for a
# version are at least that new. At 500 players, two pages a finished match open again
# (the players back from it), each reading 500 rows on the match thread the moves use.
_by_version: dict[int, tuple[int, list[dict[str, Any]]]] = {}
KEEP_ARENAS = 16


def _rows_at(arena: Arena) -> list[dict[str, Any]]:
    """The rows of ``arena``'s table as of its ``standings_version`` (shared: do not mutate)."""
    hit = _by_version.get(arena.pk)
    if hit is not None and hit[0] == arena.standings_version:
        return hit[1]
    made = rows(arena.pk)
    _by_version.pop(arena.pk, None)
    _by_version[arena.pk] = (arena.standings_version, made)
    while len(_by_version) > KEEP_ARENAS:
        _by_version.pop(next(iter(_by_version)), None)
    return made


def you(arena_id: int, user_id: int) -> dict[str, Any] | None:
    """The player's own entry: state, current match (with its URL), points and rank."""
    e = Entry.objects.filter(arena_id=arena_id, user_id=user_id).first()
    if e is None:
        return None
    tie = Q(points=e.points, rating=e.rating)
    ahead = Entry.objects.filter(
        Q(points__gt=e.points)
        | Q(points=e.points, rating__gt=e.rating)
        | (tie & Q(joined_at__lt=e.joined_at))
        | (tie & Q(joined_at=e.joined_at, id__lt=e.pk)),
        arena_id=arena_id,
    ).count()
    m = e.current_match_id
    return {
        "state": e.state,
        "waiting": e.state == Entry.State.ACTIVE and m is None,
        "match_id": m,
        "match_url": f"/matches/{m}/" if m else None,
        "points": e.points,
        "streak": e.streak,
        "fire": on_fire(e.streak),
        "played": e.played,
        "rank": ahead + 1,
        "final_rank": e.final_rank,
    }


def arenas_of(user: Any) -> tuple[list[dict[str, Any]], int | None]:
    """The arenas a player took part in (newest first, 50 at most) and their best
    final rank over all of them: one query (the best is a window over every row)."""
    rows = list(
        Entry.objects.filter(user=user)
        .select_related("arena")
        .annotate(best=Window(expression=Min("final_rank")))
        .order_by("-arena__starts_at")[:50]
    )
    best = rows[0].best if rows else None
    return [
        {"arena": e.arena, "points": e.points, "played": e.played, "rank": e.final_rank}
        for e in rows
    ], best
