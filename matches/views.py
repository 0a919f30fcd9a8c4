"""HTML views: the lobby, invites, same-device and computer matches, the match page.

Thin like the consumers: each change is one call into ``matches.lobby`` or
``matches.play``; the JSON endpoints are ``matches.api``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from matches.lobby.invites import accept_invite, cancel_invite, create_invite, create_same_device
from matches.play.errors import ServiceError
from matches.play.seating import live_matches_of, watchable
from matches.play.store import current_view
from matches.ui.text import time_control

from .models import Invite


def lobby(request: HttpRequest) -> HttpResponse:
    from matches.lobby.computer import LEVELS

    ctx: dict[str, Any] = {"time_control": time_control(), "computer_levels": LEVELS.items()}
    if request.user.is_authenticated:
        ctx["live_matches"] = live_matches_of(request.user)
        playing = next((m for m in ctx["live_matches"] if m.status == m.Status.LIVE), None)
        if playing is not None:
            # A player whose match is under way belongs there, not in a new one.
            messages.info(request, _("Your match is under way: back to it."))
            return redirect("matches:match", match_id=playing.pk)
        # Live now: the matches anyone may watch, the user's own left to the list above.
        ctx["watchable"] = [m for m in watchable() if not m.seats_of(request.user.pk)]
        ctx["open_invites"] = Invite.objects.filter(
            creator=request.user, status=Invite.Status.OPEN
        )[:10]
    return render(request, "lobby/home.html", ctx)


def _refused(request: HttpRequest, e: ServiceError, fallback: HttpResponse) -> HttpResponse:
    """Say why; a player who is busy in a match goes back to it."""
    messages.error(request, e.message)
    if e.match_id is not None and e.code == "busy":
        return redirect("matches:match", match_id=e.match_id)
    return fallback


@login_required
@require_POST
def invite_create(request: HttpRequest) -> HttpResponse:
    try:
        inv = create_invite(request.user)
    except ServiceError as e:
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
    # No invite code holds a NUL and PostgreSQL text cannot: not found, not a 500.
    if "\x00" in code:
        raise Http404
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
    # No invite code holds a NUL and PostgreSQL text cannot: not found, not a 500.
    if "\x00" in code:
        raise Http404
    inv = get_object_or_404(Invite, code=code, creator=request.user)
    if inv.status == Invite.Status.ACCEPTED and inv.match_id is not None:
        return HttpResponseClientRedirect(reverse("matches:match", args=[inv.match_id]))
    return render(request, "lobby/_invite_status.html", {"invite": inv})


@login_required
@require_POST
def invite_accept(request: HttpRequest, code: str) -> HttpResponse:
    try:
        m = accept_invite(code, request.user)
    except ServiceError as e:
        back = (
            redirect("matches:invite", code=code)
            if e.code != "not_found"
            else redirect("matches:lobby")
        )
        return _refused(request, e, back)
    return redirect("matches:match", match_id=m.pk)


@login_required
@require_POST
def invite_cancel(request: HttpRequest, code: str) -> HttpResponse:
    try:
        cancel_invite(code, request.user)
    except ServiceError as e:
        messages.error(request, e.message)
    return redirect("matches:lobby")


@login_required
@require_POST
def same_device_create(request: HttpRequest) -> HttpResponse:
    try:
        m = create_same_device(request.user, request.POST.get("guest_name", ""))
    except ServiceError as e:
        return _refused(request, e, redirect("matches:lobby"))
    return redirect("matches:match", match_id=m.pk)


@login_required
@require_POST
def computer_create(request: HttpRequest) -> HttpResponse:
    """Play the computer at the level chosen in the lobby (casual, unrated)."""
    from matches.lobby import computer

    try:
        m = computer.play(request.user, _level(request.POST.get("level")))
    except ServiceError as e:
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
        m, view = current_view(match_id, request.user, watch=True)
    except ServiceError as e:
        raise Http404(e.message) from None
    from matches.ui.fragments import page_context

    ctx = page_context(view)
    ctx.setdefault("match_obj", m)
    return render(request, "matches/match.html", ctx)
