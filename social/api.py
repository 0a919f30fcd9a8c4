"""The JSON API of playing together (docs/protocol.md, "Challenges, follows, blocks").

Thin: every change is in ``challenges``, ``blocks``, ``notify`` or ``webpush``.
Errors are ``{"code", "message"}`` with the status of :data:`STATUS`.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.api import not_logged_in
from matches.play.errors import ServiceError

from . import blocks, challenges, friends, notify, presence, webpush

STATUS = {
    "bad_request": 400,
    "self": 400,
    "computer": 400,
    "blocked": 403,
    "not_found": 404,
    "too_many_challenges": 429,
}


def error(e: ServiceError) -> JsonResponse:
    body: dict[str, Any] = {"code": e.code, "message": e.message}
    if e.match_id is not None:
        body["match_id"] = e.match_id
    return JsonResponse(body, status=STATUS.get(e.code, 409))


def _bad(message: str) -> JsonResponse:
    return JsonResponse({"code": "bad_request", "message": message}, status=400)


def _body(request: HttpRequest) -> dict[str, Any] | None:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, RecursionError):  # RecursionError: nested past parsing
        return None
    return body if isinstance(body, dict) else None


def _user(request: HttpRequest) -> JsonResponse | None:
    return None if request.user.is_authenticated else not_logged_in()


def _named(username: Any) -> Any:
    if not isinstance(username, str) or not username.strip():
        raise ServiceError("bad_request", _("Name a player."))
    # No name holds a NUL (accounts/names.py) and PostgreSQL text cannot: nobody, not a 500.
    users = get_user_model().objects.filter(is_active=True)
    user = None if "\x00" in username else users.filter(username=username.strip()).first()
    if user is None:
        raise ServiceError("not_found", _("There is no player of that name."))
    return user


@require_http_methods(["GET", "POST"])
def challenges_view(request: HttpRequest) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    if request.method == "GET":
        found = challenges.open_for(request.user)
        return JsonResponse({k: [challenges.as_json(c) for c in v] for k, v in found.items()})
    body = _body(request)
    if body is None:
        return _bad(_("Send JSON."))
    try:
        ch = challenges.create(request.user, body.get("username"))
    except ServiceError as e:
        return error(e)
    return JsonResponse(challenges.as_json(ch), status=201)


@require_POST
def challenge_op(request: HttpRequest, challenge_id: int, op: str) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    try:
        if op == "accept":
            m = challenges.accept(challenge_id, request.user)
            return JsonResponse({"match_id": m.pk, "ws": f"/ws/matches/{m.pk}/"})
        ch = (challenges.decline if op == "decline" else challenges.cancel)(
            challenge_id, request.user
        )
    except ServiceError as e:
        return error(e)
    return JsonResponse(challenges.as_json(ch))


def _edge_list(request: HttpRequest, add: Any, listing: Any) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    if request.method == "GET":
        return JsonResponse(listing(request.user))
    body = _body(request)
    if body is None:
        return _bad(_("Send JSON."))
    try:
        created = add(request.user, _named(body.get("username")))
    except ServiceError as e:
        return error(e)
    return JsonResponse({"username": body["username"].strip()}, status=201 if created else 200)


def _edge_delete(request: HttpRequest, username: str, remove: Any) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    try:
        target = _named(username)
    except ServiceError as e:
        return error(e)
    return JsonResponse({"username": target.username, "removed": remove(request.user, target)})


@require_http_methods(["GET", "POST"])
def follows_view(request: HttpRequest) -> JsonResponse:
    return _edge_list(request, blocks.follow, friends.following_json)


@require_http_methods(["DELETE", "POST"])
def follow_delete(request: HttpRequest, username: str) -> JsonResponse:
    return _edge_delete(request, username, blocks.unfollow)


@require_http_methods(["GET", "POST"])
def blocks_view(request: HttpRequest) -> JsonResponse:
    return _edge_list(request, blocks.block, friends.blocked_json)


@require_http_methods(["DELETE", "POST"])
def block_delete(request: HttpRequest, username: str) -> JsonResponse:
    return _edge_delete(request, username, blocks.unblock)


@require_GET
def notifications_view(request: HttpRequest) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    return JsonResponse(
        {
            "unread": notify.unread(request.user.pk),
            "notifications": [notify.as_json(n) for n in notify.recent(request.user)],
        }
    )


@require_POST
def notifications_read(request: HttpRequest) -> JsonResponse:
    if (denied := _user(request)) is not None:
        return denied
    return JsonResponse({"marked": notify.mark_read(request.user), "unread": 0})


@require_POST
def presence_view(request: HttpRequest) -> JsonResponse:
    """``{"hidden": bool}``: the page was hidden or shown (decides whether to push)."""
    if (denied := _user(request)) is not None:
        return denied
    body = _body(request)
    if body is None or type(body.get("hidden")) is not bool:
        return _bad(_('Send {"hidden": true} or {"hidden": false}.'))
    presence.set_hidden(request.user.pk, body["hidden"], getattr(request, "LANGUAGE_CODE", ""))
    return JsonResponse({"hidden": body["hidden"]})


@require_http_methods(["GET", "POST"])
def push_view(request: HttpRequest) -> JsonResponse:
    """GET: the VAPID public key; POST: a ``PushSubscription.toJSON()`` (opts in)."""
    if (denied := _user(request)) is not None:
        return denied
    if request.method == "GET":
        return JsonResponse({"public_key": webpush.application_server_key()})
    body = _body(request)
    try:
        sub = webpush.subscribe(request.user, body)
    except ValueError:
        return _bad(_("That is not a push subscription."))
    return JsonResponse({"id": sub.pk}, status=201)
