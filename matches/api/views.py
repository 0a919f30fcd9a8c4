"""The JSON API for scripted clients and bots (docs/protocol.md, "HTTP API").

The same calls as the HTML views, answered as JSON: ``{"code", "message"}`` with
a 4xx status for a refusal (and ``match_id`` for a player who is busy in one).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.api import not_logged_in
from matches.lobby.invites import accept_invite, create_invite, create_same_device
from matches.play.errors import ServiceError
from matches.play.seating import live_matches_of
from matches.play.store import current_view


def socket_path(match_id: int) -> str:
    """The match socket's path (matches/realtime/routing.py; Channels' routes have no reverse())."""
    return f"/ws/matches/{match_id}/"


def _api_user(request: HttpRequest) -> JsonResponse | None:
    # accounts.api.api_login_required answers anonymous /api/ calls first; this
    # keeps each view safe on its own.
    return None if request.user.is_authenticated else not_logged_in()


def _error(e: ServiceError, status: int = 400) -> JsonResponse:
    body: dict[str, Any] = {"code": e.code, "message": e.message}
    if e.match_id is not None:
        body["match_id"] = e.match_id  # the match a busy player should go back to
    retry_at = getattr(e, "retry_at", None)  # a spent budget (matches.lobby.budgets)
    if retry_at is not None:
        body["retry_at"] = retry_at
        status = 429
    return JsonResponse(body, status=status)


@require_GET
def api_match_state(request: HttpRequest, match_id: int) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        m, view = current_view(match_id, request.user)
    except ServiceError as e:
        return _error(e, 404 if e.code == "not_found" else 403)
    return JsonResponse({"type": "state", "version": m.version, "view": view})


@require_POST
def api_invite_create(request: HttpRequest) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        inv = create_invite(request.user)
    except ServiceError as e:
        return _error(e, 429)
    url = request.build_absolute_uri(reverse("matches:invite", kwargs={"code": inv.code}))
    return JsonResponse({"code": inv.code, "url": url, "expires_at": inv.expires_at.isoformat()})


@require_POST
def api_invite_accept(request: HttpRequest, code: str) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        m = accept_invite(code, request.user)
    except ServiceError as e:
        return _error(e, 404 if e.code == "not_found" else 409)
    return JsonResponse({"match_id": m.pk, "ws": socket_path(m.pk)})


@require_POST
def api_same_device_create(request: HttpRequest) -> JsonResponse:
    if (denied := _api_user(request)) is not None:
        return denied
    try:
        body = json.loads(request.body or b"{}")
        name = body.get("guest_name", "") if isinstance(body, dict) else ""
        m = create_same_device(request.user, name if isinstance(name, str) else "")
    except (ValueError, RecursionError):  # RecursionError: JSON nested past parsing
        return JsonResponse({"code": "bad_request", "message": _("Send JSON.")}, status=400)
    except ServiceError as e:
        return _error(e)
    return JsonResponse({"match_id": m.pk, "ws": socket_path(m.pk)})


@require_POST
def api_computer_create(request: HttpRequest) -> JsonResponse:
    """``{"level": 1|2|3}`` → a casual match against the computer (docs/protocol.md)."""
    from matches.lobby import computer

    if (denied := _api_user(request)) is not None:
        return denied
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, RecursionError):  # RecursionError: nested past parsing
        return JsonResponse({"code": "bad_request", "message": _("Send JSON.")}, status=400)
    level = body.get("level") if isinstance(body, dict) else None
    try:
        m = computer.play(request.user, level if type(level) is int else 0)
    except ServiceError as e:
        return _error(e)
    return JsonResponse({"match_id": m.pk, "ws": socket_path(m.pk)})


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
                    "ws": socket_path(m.pk),
                }
                for m in live_matches_of(request.user)
            ]
        }
    )
