"""HTTP views of the ranked queue and rematch: thin, every change in ``queue`` / ``rematch``.

The lobby's queue card (``lobby/_queue_card.html``) posts to join and leave
with htmx and swaps itself for the answer; without JavaScript the same forms
post and come back to the lobby. A join that pairs at once goes to the match.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from matches.lobby import matchmaking as queue
from matches.lobby import rematch as rematch_service
from matches.play.errors import ServiceError


def card_context(user: Any) -> dict[str, Any]:
    status = queue.status_of(user)
    waited_s = (status["waited_ms"] or 0) // 1000
    status["waited_text"] = f"{waited_s // 60}:{waited_s % 60:02d}"
    return status


def _card(request: HttpRequest, error: str = "") -> HttpResponse:
    return render(
        request, "lobby/_queue_card.html", {"q": card_context(request.user), "queue_error": error}
    )


@login_required
@require_GET
def queue_card(request: HttpRequest) -> HttpResponse:
    return _card(request)


@login_required
@require_POST
def queue_join(request: HttpRequest) -> HttpResponse:
    try:
        result = queue.join(request.user)
    except ServiceError as e:
        if getattr(request, "bot_token", None) is not None:
            # A program with a bearer token (accounts/tokens.py) is told in JSON.
            status = 403 if e.code == "bot_not_ranked" else 409
            body: dict[str, Any] = {"code": e.code, "message": e.message}
            if getattr(e, "retry_at", None) is not None:  # rate_limited, cooldown
                body["retry_at"], status = e.retry_at, 429  # type: ignore[attr-defined]
            return JsonResponse(body, status=status)
        if request.htmx:
            return _card(request, e.message)
        messages.error(request, e.message)
        return redirect("matches:lobby")
    if result.match is not None:
        url = reverse("matches:match", args=[result.match.pk])
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    return _card(request) if request.htmx else redirect("matches:lobby")


@login_required
@require_POST
def queue_leave(request: HttpRequest) -> HttpResponse:
    queue.leave(request.user)
    return _card(request) if request.htmx else redirect("matches:lobby")


@login_required
@require_POST
def rematch(request: HttpRequest, match_id: int) -> HttpResponse:
    """``op`` = ``rematch`` (offer), ``rematch_accept`` or ``rematch_decline``."""
    op = request.POST.get("op", "rematch")
    here = reverse("matches:match", args=[match_id])
    try:
        outcome = rematch_service.act_rematch(match_id, request.user, op)
    except ServiceError as e:
        if e.code == "not_a_player":
            raise PermissionDenied(e.message) from None  # the 403 page says why
        messages.error(request, e.message)
        return HttpResponseClientRedirect(here) if request.htmx else redirect(here)
    if outcome.error is not None:
        messages.error(request, outcome.error.message)
    new = getattr(getattr(outcome.match, "rematch_offer", None), "new_match_id", None)
    url = reverse("matches:match", args=[new]) if new else here
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
