"""What the history app adds to a player's profile (``/u/<username>/``).

``accounts.views.profile`` calls ``extras(player, viewer)`` and the profile
template includes ``history/_profile_extras.html``, which reads the returned
dict as ``profile_extras``. Queries: a fixed handful, whatever the history.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from matches.models import Match
from ratings.elo import INITIAL_RATING
from ratings.models import RatingChange
from ratings.services import rating_of

from .charts import Chart, line_chart, nice_range
from .records import Row, matches_over, row_for

RECENT = 5
CHART_POINTS = 100  # the rating chart shows at most the last 100 rated matches


def rating_chart(user: Any) -> Chart | None:
    """The rating after each rated match (starting from the rating before the first)."""
    changes = list(
        RatingChange.objects.filter(player=user)
        .order_by("-created_at", "-id")
        .values_list("before", "after")[:CHART_POINTS]
    )
    if not changes:
        return None
    changes.reverse()
    values = [changes[0][0]] + [after for _before, after in changes]
    lo, hi = nice_range(values)
    return line_chart(
        [values],
        y_min=lo,
        y_max=hi,
        stepped=False,
        css=("rating",),
        ticks=sorted({lo, hi, INITIAL_RATING} if lo <= INITIAL_RATING <= hi else {lo, hi}),
    )


def ranked_record(user: Any) -> dict[str, int]:
    """Ranked matches finished with a result: played, won, lost (one query)."""
    won = Q(player0=user, winner_seat=0) | Q(player1=user, winner_seat=1)
    lost = Q(player0=user, winner_seat=1) | Q(player1=user, winner_seat=0)
    return Match.objects.filter(
        Q(player0=user) | Q(player1=user),
        kind=Match.Kind.RANKED,
        status=Match.Status.FINISHED,
    ).aggregate(
        played=Count("pk"),
        won=Count("pk", filter=won),
        lost=Count("pk", filter=lost),
    )


def recent_matches(user: Any, viewer: Any = None, limit: int = RECENT) -> list[Row]:
    return [row_for(m, user, viewer) for m in matches_over(user)[:limit]]


def extras(user: Any, viewer: Any = None) -> dict[str, Any]:
    """The profile's rating, rating chart, ranked record and recent matches."""
    return {
        "player": user,
        "rating": rating_of(user),
        "rating_chart": rating_chart(user),
        "ranked": ranked_record(user),
        "recent": recent_matches(user, viewer),
    }
