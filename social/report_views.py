"""The report forms: ``/u/<username>/report/`` and ``/matches/<id>/report/?step=N``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from history import replay as replays
from history.records import can_replay
from matches.models import Match

from . import reports


@login_required
@require_http_methods(["GET", "POST"])
def report_player(request: HttpRequest, username: str) -> HttpResponse:
    # No name holds a NUL (accounts/names.py) and PostgreSQL text cannot: not found, not a 500.
    if "\x00" in username:
        raise Http404
    player = get_object_or_404(get_user_model(), username=username, is_active=True)
    if player.pk == request.user.pk:
        raise Http404(_("That is you."))
    form = reports.PlayerReportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        reports.report_player(request.user, player, form.cleaned_data["reason"])
        messages.success(request, _("Thank you: the report is with the staff."))
        return redirect("profile", username=player.username)
    return render(request, "social/report.html", {"form": form, "player": player})


@login_required
@require_http_methods(["GET", "POST"])
def report_match(request: HttpRequest, match_id: int) -> HttpResponse:
    m = get_object_or_404(Match.objects.select_related("player0", "player1"), pk=match_id)
    if not m.is_over:
        raise Http404(_("There is no replay of a match that is not over."))
    if not can_replay(m, request.user) or not m.seats_of(request.user.pk):
        raise PermissionDenied(_("Only the players can report this match."))
    rp = replays.build_cached(m)
    steps = [(s.index + 1, f"{s.index + 1}. {s.text}") for s in rp.steps]
    initial = {"step": request.GET.get("step")}
    form = reports.MatchReportForm(request.POST or None, initial=initial, steps=steps)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        reports.report_match(request.user, m, d["step"], d["reason"], d["expected"])
        messages.success(request, _("Thank you: the report is with the staff."))
        return redirect(reverse("history:replay", args=[m.pk]) + f"?step={d['step']}")
    return render(request, "social/report.html", {"form": form, "match": m})
