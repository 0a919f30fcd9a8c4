"""HTTP views: the lobby, invites, same-device matches, the match page, a small JSON API.

Thin like the consumers: every change goes through ``matches.services``.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.api import not_logged_in
from rules.examples import time_control

from . import services
from .models import Invite


def lobby(request: HttpRequest) -> HttpResponse:
    from .computer import LEVELS

    ctx: dict[str, Any] = {"time_control": time_control(), "computer_levels": LEVELS.items()}
    if request.user.is_authenticated:
        ctx["live_matches"] = services.live_matches_of(request.user)
        playing = next((m for m in ctx["live_matches"] if m.status == m.Status.LIVE), None)
        if playing is not None:
            # A player whose match is under way belongs there, not in a new one.
            messages.info(request, _("Your match is under way: back to it."))
            return redirect("matches:match", match_id=playing.pk)
        # Live now: the matches anyone may watch, the user's own left to the list above.
        ctx["watchable"] = [m for m in services.watchable() if not m.seats_of(request.user.pk)]
        ctx["open_invites"] = Invite.objects.filter(
            creator=request.user, status=Invite.Status.OPEN
        )[:10]
    return render(request, "lobby/home.html", ctx)


def _refused(
    request: HttpRequest, e: services.ServiceError, fallback: HttpResponse
) -> HttpResponse:
    """Say why; a player who is busy in a match goes back to it."""
    messages.error(request, e.message)
    if e.match_id is not None and e.code == "busy":
        return redirect("matches:match", match_id=e.match_id)
    return fallback


@login_required
@require_POST
def invite_create(request: HttpRequest) -> HttpResponse:
    try:
        inv = services.create_invite(request.user)
    except services.ServiceError as e:
        return _refused(request, e, redirect("matches:lobby"))
    return redirect("matches:invite", code=inv.code)


@never_cache
@require_GET
def invite_detail(request: HttpRequest, code: str) -> HttpResponse:
    """An invite link: who invites, the time control, and what can be done with it.

    Public: a stranger sees who invites before logging in or signing up, and both
    lead back here (``next``). Only a logged-in user other than the creator gets
    the accept button, and only while the invite is open; an accepted invite says
    so, with a link to the match for its two players. Never cached, so that Back
    from the match fetches it again instead of showing a stale accept button.
    """
    inv = get_object_or_404(Invite.objects.select_related("creator"), code=code)
    user_id = request.user.pk if request.user.is_authenticated else None
    accepted = inv.status == Invite.Status.ACCEPTED and inv.match_id is not None
    is_player = accepted and user_id is not None and user_id in (inv.creator_id, inv.accepted_by_id)
    url = request.build_absolute_uri(reverse("matches:invite", kwargs={"code": inv.code}))
    return render(
        request,
        "lobby/invite.html",
        {
            "invite": inv,
            "invite_url": url,
            "is_creator": user_id is not None and inv.creator_id == user_id,
            "can_accept": inv.status == Invite.Status.OPEN and not inv.expired,
            "match_url": reverse("matches:match", args=[inv.match_id]) if is_player else None,
            "time_control": time_control(),
        },
    )


@login_required
@require_GET
def invite_status(request: HttpRequest, code: str) -> HttpResponse:
    """Polled by the creator's invite page; moves it on to the match when accepted."""
    inv = get_object_or_404(Invite, code=code, creator=request.user)
    if inv.status == Invite.Status.ACCEPTED and inv.match_id is not None:
        return HttpResponseClientRedirect(reverse("matches:match", args=[inv.match_id]))
    return render(request, "lobby/_invite_status.html", {"invite": inv})


@login_required
@require_POST
def invite_accept(request: HttpRequest, code: str) -> HttpResponse:
    try:
        m = services.accept_invite(code, request.user)
    except services.ServiceError as e:
        back = redirect("matches:invite", code=code) if e.code != "not_found" else redirect("/")
        return _refused(request, e, back)
    return redirect("matches:match", match_id=m.pk)


@login_required
@require_POST
def invite_cancel(request: HttpRequest, code: str) -> HttpResponse:
    try:
        services.cancel_invite(code, request.user)
    except services.ServiceError as e:
        messages.error(request, e.message)
    return redirect("matches:lobby")


@login_required
@require_POST
def same_device_create(request: HttpRequest) -> HttpResponse:
    try:
        m = services.create_same_device(request.user, request.POST.get("guest_name", ""))
    except services.ServiceError as e:
        return _refused(request, e, redirect("matches:lobby"))
    return redirect("matches:match", match_id=m.pk)


@login_required
@require_POST
def computer_create(request: HttpRequest) -> HttpResponse:
    """Play the computer at the level chosen in the lobby (casual, unrated)."""
    from . import computer

    try:
        m = computer.play(request.user, _level(request.POST.get("level")))
    except services.ServiceError as e:
        return _refused(request, e, redirect("matches:lobby"))
    return redirect("matches:match", match_id=m.pk)


def _level(raw: Any) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0  # no such level: refused with a message


@login_required
@require_GET
def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    try:
        # Anyone logged in who holds no seat watches (the spectators' view).
        m, view = services.current_view(match_id, request.user, watch=True)
    except services.ServiceError as e:
        raise Http404(e.message) from None
    from .render import page_context

    ctx = page_context(view)
    ctx.setdefault("match_obj", m)
    return render(request, "matches/match.html", ctx)


# --- JSON API for scripted clients (docs/protocol.md) ------------------------


def _api_user(request: HttpRequest) -> JsonResponse | None:
    # accounts.api.api_login_required answers anonymous /api/ calls first; this
    # keeps each view safe on its own.
    return None if request.user.is_authenticated else not_logged_in()


def _error(e: services.ServiceError, status: int = 400) -> JsonResponse:
    body: dict[str, Any] = {"code": e.code, "message": e.message}
    if e.match_id is not None:
        body["match_id"] = e.match_id  # the match a busy player should go back to
    retry_at = getattr(e, "retry_at", None)  # a spent budget (matches.budgets)
    if retry_at is not None:
        body["retry_at"] = retry_at
        status = 429
    return JsonResponse(body, status=status)


@require_GET
def api_match_state(request: HttpRequest, match_id: int) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        m, view = services.current_view(match_id, request.user)
    except services.ServiceError as e:
        return _error(e, 404 if e.code == "not_found" else 403)
    return JsonResponse({"type": "state", "version": m.version, "view": view})


@require_POST
def api_invite_create(request: HttpRequest) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        inv = services.create_invite(request.user)
    except services.ServiceError as e:
        return _error(e, 429)
    url = request.build_absolute_uri(reverse("matches:invite", kwargs={"code": inv.code}))
    return JsonResponse({"code": inv.code, "url": url, "expires_at": inv.expires_at.isoformat()})


@require_POST
def api_invite_accept(request: HttpRequest, code: str) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        m = services.accept_invite(code, request.user)
    except services.ServiceError as e:
        return _error(e, 404 if e.code == "not_found" else 409)
    return JsonResponse({"match_id": m.pk, "ws": f"/ws/matches/{m.pk}/"})


@require_POST
def api_same_device_create(request: HttpRequest) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        body = json.loads(request.body or b"{}")
        name = body.get("guest_name", "") if isinstance(body, dict) else ""
        m = services.create_same_device(request.user, name if isinstance(name, str) else "")
    except ValueError:
        return JsonResponse({"code": "bad_request", "message": _("Send JSON.")}, status=400)
    except services.ServiceError as e:
        return _error(e)
    return JsonResponse({"match_id": m.pk, "ws": f"/ws/matches/{m.pk}/"})


@require_POST
def api_computer_create(request: HttpRequest) -> JsonResponse:
    """``{"level": 1|2|3}`` → a casual match against the computer (docs/protocol.md)."""
    from . import computer

    if (denied := _api_user(request)) is not None:
        return denied
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return JsonResponse({"code": "bad_request", "message": _("Send JSON.")}, status=400)
    level = body.get("level") if isinstance(body, dict) else None
    try:
        m = computer.play(request.user, level if type(level) is int else 0)
    except services.ServiceError as e:
        return _error(e)
    return JsonResponse({"match_id": m.pk, "ws": f"/ws/matches/{m.pk}/"})


@require_GET
def api_live_matches(request: HttpRequest) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    uid = request.user.pk
    return JsonResponse(
        {
            "matches": [
                {
                    "id": m.pk,
                    "kind": m.kind,
                    "status": m.status,
                    "seats": m.seats_of(uid),
                    "names": m.names(),
                    "ws": f"/ws/matches/{m.pk}/",
                }
                for m in services.live_matches_of(request.user)
            ]
        }
    )
