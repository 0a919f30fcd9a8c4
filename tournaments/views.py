"""Arena pages and the JSON API for bots (docs/protocol.md, "Arenas").

Thin: every change goes through ``tournaments.services``.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.api import not_logged_in

from . import services, standings
from .models import Arena

LIST_FINISHED = 20
MAX_STARTS_IN_S = 7 * 24 * 3600


def _lists(now: Any) -> dict[str, list[Arena]]:
    upcoming = list(
        Arena.objects.filter(finished=False, starts_at__gt=now).order_by("starts_at")[:20]
    )
    live = [
        a
        for a in Arena.objects.filter(finished=False, starts_at__lte=now)
        if a.phase(now) == "running"
    ]
    finished = list(Arena.objects.filter(finished=True).order_by("-starts_at")[:LIST_FINISHED])
    return {"upcoming": upcoming, "running": live, "finished": finished}


def arena_list(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    return render(request, "tournaments/list.html", {**_lists(now), "now": now})


def arena_page(request: HttpRequest, arena_id: int) -> HttpResponse:
    arena = Arena.objects.filter(pk=arena_id).first()
    if arena is None:
        raise Http404(_("No such arena."))
    now = timezone.now()
    me = None
    if request.user.is_authenticated:
        services.touch(arena.pk, request.user.pk)
        me = standings.you(arena.pk, request.user.pk)
    rows = standings.rows(arena.pk)
    ctx = {
        "arena": arena,
        "summary": standings.summary(arena, now),
        "phase": arena.phase(now),
        "rows": rows[:100],
        "podium": rows[:3] if arena.finished else [],
        "me": me,
        "count": len(rows),
    }
    return render(request, "tournaments/arena.html", ctx)


_ACTIONS = {"join": services.join, "withdraw": services.withdraw, "pause": services.pause}


@login_required
@require_POST
def arena_action(request: HttpRequest, arena_id: int, action: str) -> HttpResponse:
    try:
        _ACTIONS[action](arena_id, request.user)
    except services.ArenaError as e:
        if e.code == "not_found":
            raise Http404(e.message) from None
        messages.error(request, e.message)
    return redirect("tournaments:arena", arena_id=arena_id)


# --- JSON API ------------------------------------------------------------------


def _error(e: services.ArenaError) -> JsonResponse:
    return JsonResponse({"code": e.code, "message": e.message}, status=e.status)


def _bad(message: str) -> JsonResponse:
    return JsonResponse({"code": "bad_request", "message": message}, status=400)


def _create(request: HttpRequest) -> JsonResponse:
    if not request.user.is_staff:
        return JsonResponse(
            {"code": "forbidden", "message": _("Only staff create arenas.")}, status=403
        )
    try:
        body = json.loads(request.body or b"")
    except (ValueError, RecursionError):  # RecursionError: nested past parsing
        return _bad(_("Send JSON."))
    if not isinstance(body, dict):
        return _bad(_("Send a JSON object."))
    starts_in = body.get("starts_in_s", 0)
    rated = body.get("rated", True)
    if type(starts_in) is not int or not 0 <= starts_in <= MAX_STARTS_IN_S:
        return _bad(_("starts_in_s is a whole number of seconds from 0 to one week."))
    if type(rated) is not bool:
        return _bad(_("rated is true or false."))
    name = body.get("name")
    if not isinstance(name, str):
        return _bad(_("An arena needs a name of 1 to 80 printable characters."))
    try:
        arena = services.create_arena(
            name,
            body.get("minutes"),  # type: ignore[arg-type]  # checked by create_arena
            timezone.now() + timedelta(seconds=starts_in),
            rated,
        )
    except services.ArenaError as e:
        return _error(e)
    return JsonResponse({"id": arena.pk}, status=201)


@require_http_methods(["GET", "POST"])
def api_arenas(request: HttpRequest) -> JsonResponse:
    if not request.user.is_authenticated:
        return not_logged_in()
    if request.method == "POST":
        return _create(request)
    now = timezone.now()
    lists = _lists(now)
    return JsonResponse({k: [standings.summary(a, now) for a in v] for k, v in lists.items()})


@require_GET
def api_arena(request: HttpRequest, arena_id: int) -> JsonResponse:
    """The arena, its standings and the caller's own entry; also the caller's presence."""
    if not request.user.is_authenticated:
        return not_logged_in()
    arena = Arena.objects.filter(pk=arena_id).first()
    if arena is None:
        return _error(services.ArenaError("not_found", _("No such arena."), 404))
    services.touch(arena.pk, request.user.pk)
    return JsonResponse(
        {
            **standings.summary(arena),
            "standings": standings.rows(arena.pk),
            "you": standings.you(arena.pk, request.user.pk),
        }
    )


@require_POST
def api_arena_action(request: HttpRequest, arena_id: int, action: str) -> JsonResponse:
    if not request.user.is_authenticated:
        return not_logged_in()
    try:
        _ACTIONS[action](arena_id, request.user)
    except services.ArenaError as e:
        return _error(e)
    return JsonResponse({"you": standings.you(arena_id, request.user.pk)})


@require_POST
def berserk(request: HttpRequest, match_id: int) -> JsonResponse:
    """Halve your own main time for this arena match (before 開始 completes)."""
    if not request.user.is_authenticated:
        return not_logged_in()
    try:
        p = services.berserk(match_id, request.user)
    except services.ArenaError as e:
        return _error(e)
    return JsonResponse({"berserk": p.berserk, "arena_id": p.arena_id})
