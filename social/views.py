"""The HTML side: forms on profiles and in the lobby, the bell's list and toast.

Every form posts and comes back (``next``) with a message saying what happened;
the changes themselves are in ``challenges`` and ``blocks``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.views import safe_next
from matches.models import Match
from matches.play.errors import ServiceError

from . import blocks, challenges, notify
from .models import Challenge, Notification


def _back(request: HttpRequest) -> HttpResponse:
    return redirect(safe_next(request))


def _target(request: HttpRequest) -> Any:
    username = request.POST.get("username", "")
    if "\x00" in username:  # no name holds one, and PostgreSQL text cannot (a 500)
        raise Http404
    return get_object_or_404(get_user_model(), username=username, is_active=True)


@login_required
@require_POST
def challenge(request: HttpRequest) -> HttpResponse:
    try:
        challenges.create(request.user, request.POST.get("username", ""))
    except ServiceError as e:
        messages.error(request, e.message)
    else:
        messages.success(request, _("Challenge sent: it is open for three minutes."))
    return _back(request)


@login_required
@require_POST
def challenge_op(request: HttpRequest, challenge_id: int, op: str) -> HttpResponse:
    try:
        if op == "accept":
            m = challenges.accept(challenge_id, request.user)
            return redirect("matches:match", match_id=m.pk)
        if op == "decline":
            challenges.decline(challenge_id, request.user)
            messages.info(request, _("Challenge declined."))
        else:
            challenges.cancel(challenge_id, request.user)
            messages.info(request, _("Challenge cancelled."))
    except ServiceError as e:
        messages.error(request, e.message)
        if e.code == "busy" and e.match_id:
            return redirect("matches:match", match_id=e.match_id)
    return _back(request)


@login_required
@require_POST
def relation(request: HttpRequest, op: str) -> HttpResponse:
    """``op``: follow, unfollow, block, unblock (the profile's buttons)."""
    target = _target(request)
    done = {
        "follow": (blocks.follow, _("You follow %(name)s.")),
        "unfollow": (blocks.unfollow, _("You no longer follow %(name)s.")),
        "block": (blocks.block, _("%(name)s is blocked.")),
        "unblock": (blocks.unblock, _("%(name)s is no longer blocked.")),
    }
    fn, text = done[op]
    try:
        fn(request.user, target)
    except ServiceError as e:
        messages.error(request, e.message)
    else:
        messages.success(request, text % {"name": target.username})
    return _back(request)


@login_required
@require_GET
def notifications(request: HttpRequest) -> HttpResponse:
    items = notify.recent(request.user)
    found = challenges.open_for(request.user)
    response = render(
        request,
        "social/notifications.html",
        {"items": items, "incoming": found["incoming"], "outgoing": found["outgoing"]},
    )
    if _opened_here(request):
        notify.mark_read(request.user)  # seen now: the bell's count goes to zero
    return response


def _opened_here(request: HttpRequest) -> bool:
    """The player opened this themselves: from a page of this site, or typed or
    bookmarked (``Sec-Fetch-Site`` ``same-origin`` or ``none``; a browser too old to
    say is believed). A link or an image on another site reaches the page too, with
    the session's cookie, and must not mark anything read: the bell would go quiet on
    a challenge the player never saw."""
    return request.headers.get("Sec-Fetch-Site", "none") in ("same-origin", "none")


@login_required
@require_GET
def friends_fragment(request: HttpRequest) -> HttpResponse:
    """The lobby's friends-online card again (it refreshes itself every 20 s)."""
    from .templatetags.social_tags import friends_online

    ctx = friends_online({"request": request}, request.user)
    del ctx["csrf_token"]  # the request's own, from render()
    return render(request, "social/_friends_online.html", ctx)


def _accepted_while_away(user: Any) -> Notification | None:
    """A challenge of ours accepted while no socket of ours was open (the page was
    loading after the challenge's own post, or reconnecting), whose match still waits
    for 開始: the page goes there, once (the notice is read from then on)."""
    for n in user.notifications.filter(
        read_at__isnull=True, kind=Notification.Kind.CHALLENGE_ACCEPTED, match_id__isnull=False
    )[:3]:
        if Match.objects.filter(pk=n.match_id, status=Match.Status.WAITING).exists():
            Notification.objects.filter(pk=n.pk).update(read_at=timezone.now())
            return n
    return None


@login_required
@require_GET
def toast(request: HttpRequest) -> HttpResponse:
    """The newest unread notification as a toast (fetched by notify.js on a push).

    With ``?pending=1`` (notify.js asks so each time its socket opens) only a
    challenge to this player that is still open: one made while the page was
    loading or its socket reconnecting was pushed to nobody, and must not be missed.
    """
    unread = request.user.notifications.filter(read_at__isnull=True)
    if request.GET.get("pending"):
        accepted = _accepted_while_away(request.user) if _opened_here(request) else None
        if accepted is not None:
            response = render(
                request,
                "social/_toast.html",
                {
                    "n": accepted,
                    "unread": notify.unread(request.user.pk),
                    "next": request.GET.get("next", "/"),
                },  # fmt: skip
            )
            response["X-Sb-Go"] = notify.link(accepted)
            return response
        unread = unread.filter(
            kind="challenge",
            challenge__status=Challenge.Status.OPEN,
            challenge__expires_at__gt=timezone.now(),
        )
    n = unread.select_related("actor", "challenge").first()
    if n is None and request.GET.get("pending"):
        return HttpResponse(status=204)
    return render(
        request,
        "social/_toast.html",
        {"n": n, "unread": notify.unread(request.user.pk), "next": request.GET.get("next", "/")},
    )
