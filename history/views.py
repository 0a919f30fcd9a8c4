"""Match history, replays and the leaderboard. Read-only: nothing here writes.

Who sees what (decided here, see ``records.can_replay``):

- ``/u/<username>/matches/`` is public, like the profile: results are no secret.
- ``/matches/<id>/replay/`` shows both hands, so it is only for the match's two
  players and staff, and only once the match is over (finished, aborted or
  voided). A match that is not over is a 404 for everyone (its hands and talon
  are hidden information, and a replay of it does not exist yet); an over match
  is a 403 for anyone else; anonymous visitors are sent to log in.
- ``/leaderboard/`` is public.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from matches.models import Match
from matches.ui.board_svg import drawn
from ratings.models import PlayerRating

from . import replay as replays
from .charts import line_chart
from .records import (
    HOW_LABELS,
    KIND_LABELS,
    LOST,
    NO_RESULT,
    RESULT_LABELS,
    WON,
    can_replay,
    matches_over,
    row_for,
)

PER_PAGE = 20
LEADERBOARD_PER_PAGE = 50
LEADERBOARD_MIN_MATCHES = 5


class HistoryFilter(forms.Form):
    kind = forms.ChoiceField(
        label=gettext_lazy("Kind"),
        required=False,
        choices=[("", gettext_lazy("All kinds")), *KIND_LABELS.items()],
    )
    result = forms.ChoiceField(
        label=gettext_lazy("Result"),
        required=False,
        choices=[("", gettext_lazy("All results"))]
        + [(k, RESULT_LABELS[k]) for k in (WON, LOST, NO_RESULT)],
    )


def _querystring(request: HttpRequest, **changes: Any) -> str:
    q = request.GET.copy()
    for k, v in changes.items():
        if v in (None, ""):
            q.pop(k, None)
        else:
            q[k] = str(v)
    return q.urlencode()


@require_GET
def history(request: HttpRequest, username: str) -> HttpResponse:
    """Every match of ``username`` that is over, newest first, filterable and paginated."""
    # No name holds a NUL (accounts/names.py) and PostgreSQL text cannot: not found, not a 500.
    if "\x00" in username:
        raise Http404
    player = get_object_or_404(get_user_model(), username=username, is_active=True)
    form = HistoryFilter(request.GET or None)
    kind = result = ""
    if form.is_valid():
        kind, result = form.cleaned_data["kind"], form.cleaned_data["result"]
    page = Paginator(matches_over(player, kind=kind, result=result), PER_PAGE).get_page(
        request.GET.get("page")
    )
    rows = [row_for(m, player, request.user) for m in page.object_list]
    return render(
        request,
        "history/matches.html",
        {
            "player": player,
            "form": form,
            "page": page,
            "rows": rows,
            "filtered": bool(kind or result),
            "prev_qs": _querystring(request, page=page.previous_page_number())
            if page.has_previous()
            else "",
            "next_qs": _querystring(request, page=page.next_page_number())
            if page.has_next()
            else "",
        },
    )


@login_required
@require_GET
def replay(request: HttpRequest, match_id: int) -> HttpResponse:
    """Step through a match that is over, both hands shown (``?step=N``, from 1).

    It opens at step 1, the first deal; each step is one decision, drawn on the
    live match's board (``matches.ui.board_svg``).
    """
    m = get_object_or_404(Match.objects.select_related("player0", "player1"), pk=match_id)
    if not m.is_over:
        raise Http404(_("There is no replay of a match that is not over."))
    if not can_replay(m, request.user):
        raise PermissionDenied(_("Only the players can watch this replay."))  # the 403 page
    rp = replays.build_cached(m)
    last = len(rp.steps) - 1
    try:
        n = int(request.GET.get("step", 1)) - 1
    except ValueError:
        n = 0
    n = max(0, min(n, last))
    step = rp.steps[n] if rp.steps else None
    chart = line_chart(
        [[s.balances[0] for s in rp.steps], [s.balances[1] for s in rp.steps]],
        y_min=0,
        y_max=300,
        css=("seat0", "seat1"),
        labels=rp.names,
        ticks=(0, 150, 300),
        marker=n if rp.steps else None,
    )
    decisions = rp.decisions
    longest = max((s.used or 0 for s in decisions), default=0)
    # A step link fetches only the step (#replay); a first visit, or htmx restoring its
    # history, gets the whole page.
    htmx = getattr(request, "htmx", None)
    partial = bool(htmx) and not htmx.history_restore_request
    return render(
        request,
        "history/_replay_step.html" if partial else "history/replay.html",
        {
            "match": m,
            "replay": rp,
            "step": step,
            "n": n,
            "last": last,
            "board": None
            if step is None or step.table is None
            else drawn(step.table, mark_last=step.kind == "place"),
            "hands": rp.hands,
            "chart": chart,
            "decisions": decisions,
            "longest_ms": longest,
            "kind_label": KIND_LABELS.get(m.kind, m.kind),
            "result_text": _result_text(m, rp.names),
        },
    )


def _result_text(m: Match, names: list[str]) -> str:
    if m.status == Match.Status.FINISHED and m.winner_seat in (0, 1):
        return _("%(name)s won: %(how)s") % {
            "name": names[m.winner_seat],
            "how": HOW_LABELS.get(m.end_reason, m.end_reason),
        }
    if m.status == Match.Status.ABORTED:
        return _("Aborted: no result")
    if m.status == Match.Status.VOIDED:
        return _("Voided: no result")
    return ""


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    """Players with at least 5 rated matches, best rating first; never a bot (casual only)."""
    qs = (
        PlayerRating.objects.filter(
            rated_matches__gte=LEADERBOARD_MIN_MATCHES,
            user__is_active=True,
            user__is_bot=False,
            user__computer_level__isnull=True,
        )
        .select_related("user")
        .order_by("-rating", "-rated_matches", "user__username")
    )
    page = Paginator(qs, LEADERBOARD_PER_PAGE).get_page(request.GET.get("page"))
    entries = [(page.start_index() + i, r) for i, r in enumerate(page.object_list)]
    return render(
        request,
        "history/leaderboard.html",
        {"page": page, "entries": entries, "min_matches": LEADERBOARD_MIN_MATCHES},
    )
