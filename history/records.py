"""A player's past matches as rows for the history page and the profile.

Every match that is over counts here: finished, aborted and voided, of every
kind. The query is built so that a page of rows costs the same number of
queries however many matches there are: the players come with
``select_related`` and the player's own rating change with a subquery.

A same-device match is read from the account holder's side: it sits at seat 0
and the named guest at seat 1, so "won" means seat 0 won.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from accounts.display import display_name
from matches.models import Match
from ratings.models import RatingChange

OVER = (Match.Status.FINISHED, Match.Status.ABORTED, Match.Status.VOIDED)

WON, LOST, NO_RESULT = "won", "lost", "none"
RESULT_LABELS: dict[str, Any] = {WON: _("Won"), LOST: _("Lost"), NO_RESULT: _("No result")}

# How a match ended (Match.end_reason, or the status for aborted/voided ones).
HOW_LABELS: dict[str, Any] = {
    "balance": _("Balance"),
    "time": _("Out of time"),
    "resign": _("Resignation"),
    "abort": _("Aborted"),
    "void": _("Voided"),
}

KIND_LABELS: dict[str, Any] = {
    "ranked": _("Ranked"),
    "casual": _("Casual"),
    "same_device": _("Same device"),
}


@dataclass(frozen=True)
class Row:
    match_id: int
    kind: str
    seat: int
    opponent: str
    # The opponent's account name (a link to its profile), or None for a guest.
    opponent_username: str | None
    opponent_bot: bool  # a program plays for the opponent (the BOT badge)
    opponent_computer: int | None  # the site's computer at this level (🤖 badge)
    result: str
    how: str
    rating_change: int | None
    date: datetime
    replay: bool  # may the viewer open the replay

    @property
    def kind_label(self) -> str:
        return str(KIND_LABELS.get(self.kind, self.kind))

    @property
    def result_label(self) -> str:
        return str(RESULT_LABELS[self.result])

    @property
    def how_label(self) -> str:
        return str(HOW_LABELS.get(self.how, self.how))


def _won(user: Any) -> Q:
    return Q(player0=user, winner_seat=0) | Q(player1=user, winner_seat=1)


def _lost(user: Any) -> Q:
    return Q(player0=user, winner_seat=1) | Q(player1=user, winner_seat=0)


def matches_over(user: Any, *, kind: str = "", result: str = "") -> QuerySet[Match]:
    """``user``'s matches that are over, newest first, optionally filtered.

    ``kind`` is a ``Match.Kind`` value; ``result`` is ``won``, ``lost`` or
    ``none`` (aborted, voided, or finished without a winner). Empty means all.
    """
    qs = Match.objects.filter(Q(player0=user) | Q(player1=user), status__in=OVER)
    if kind:
        qs = qs.filter(kind=kind)
    finished = Q(status=Match.Status.FINISHED)
    if result == WON:
        qs = qs.filter(finished & _won(user))
    elif result == LOST:
        qs = qs.filter(finished & _lost(user))
    elif result == NO_RESULT:
        qs = qs.filter(~finished | Q(winner_seat__isnull=True))
    change = RatingChange.objects.filter(match=OuterRef("pk"), player=user).values("change")[:1]
    return (
        qs.select_related("player0", "player1")
        .annotate(
            my_rating_change=Subquery(change, output_field=IntegerField()),
            ended_at=Coalesce(F("finished_at"), F("created_at")),
        )
        .order_by("-ended_at", "-pk")
    )


def can_replay(match: Match, viewer: Any) -> bool:
    """Replays are for the two players and staff, and only once the match is over."""
    if not match.is_over or viewer is None or not viewer.is_authenticated:
        return False
    return bool(viewer.is_staff) or viewer.pk in (match.player0_id, match.player1_id)


def row_for(match: Match, user: Any, viewer: Any = None) -> Row:
    """One match from ``user``'s side (``matches_over`` annotations used when present)."""
    seat = 1 if match.player1_id == user.pk and match.player0_id != user.pk else 0
    if match.kind == Match.Kind.SAME_DEVICE or match.player1_id is None:
        opponent, opponent_username, opponent_bot = match.guest_name, None, False
        opponent_computer = None
    else:
        other = match.player1 if seat == 0 else match.player0
        # コンピューター（中級） for the computer; the link still goes to its account.
        opponent, opponent_username = display_name(other), other.username
        opponent_bot = other.plays_as_bot
        opponent_computer = other.computer_level
    if match.status == Match.Status.ABORTED:
        how, result = "abort", NO_RESULT
    elif match.status == Match.Status.VOIDED:
        how, result = "void", NO_RESULT
    else:
        how = match.end_reason
        if match.winner_seat is None:
            result = NO_RESULT
        else:
            result = WON if match.winner_seat == seat else LOST
    return Row(
        match_id=match.pk,
        kind=match.kind,
        seat=seat,
        opponent=opponent,
        opponent_username=opponent_username,
        opponent_bot=opponent_bot,
        opponent_computer=opponent_computer,
        result=result,
        how=how,
        rating_change=getattr(match, "my_rating_change", None),
        date=getattr(match, "ended_at", None) or match.finished_at or match.created_at,
        replay=can_replay(match, viewer),
    )
