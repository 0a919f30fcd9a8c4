"""Bot accounts' API tokens: ``Authorization: Bearer <token>`` on HTTP and the sockets.

**The token.** ``sbb_`` and 43 URL-safe characters (256 random bits from
``secrets``). It is shown once, when made; only its SHA-256 is stored
(``BotToken.digest``). A random 256-bit secret needs no slow, salted hash: the
hash cannot be reversed and a guess never lands. A request's token is hashed,
the row found by its (unique, indexed) digest, and the digests compared again
with :func:`hmac.compare_digest` so no comparison of secrets depends on timing.
A token is never logged: nothing here logs it, and an error names only the code.

**Where it works.** On ``/api/`` and ``/queue/`` (:data:`TOKEN_PATHS`: the
public protocol's HTTP endpoints) and on the match and lobby sockets
(``matches.realtime.socket_auth``). There it replaces the session: no cookie, CSRF token
or ``Origin`` is needed, because a browser cannot attach this header to a
request another site makes it send, which is what CSRF and the Origin check
defend against. A request that sends the header is judged by it alone, never by
a cookie that came along. Anywhere else the header is ignored: the account's
pages (and managing its token) need its session.

**Limits** (django-ratelimit, in the ``ratelimit`` cache, shared by every
process through Redis when there is one): ``settings.BOT_TOKEN_RATE`` requests
per token over the token paths (429 ``rate_limited``), ``BOT_TOKEN_ISSUE_RATE``
token creations and rotations per account.

**Revocation.** Every socket opened with a token joins the token's group
(:func:`revocation_group`, named by the digest, so joining it needs no database
read). Revoking or rotating sends that group ``token.revoked`` after the commit;
the sockets close with 4401 at once (``matches.token_sockets``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from typing import Any

from asgiref.sync import async_to_sync, iscoroutinefunction, sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited

from .models import BotToken

log = logging.getLogger(__name__)

PREFIX = "sbb_"
TOKEN_PATHS = ("/api/", "/queue/")
REVOKED = "token.revoked"  # the channel-layer message that closes a token's sockets


def request_rate() -> str:
    return str(getattr(settings, "BOT_TOKEN_RATE", "120/m"))


def issue_rate() -> str:
    return str(getattr(settings, "BOT_TOKEN_ISSUE_RATE", "10/h"))


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def revocation_group(token_digest: str) -> str:
    """The channel group of the sockets opened with the token of this digest."""
    return f"bot-token.{token_digest}"


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization`` header value.

    ``None`` when there is no header; ``""`` when there is one that holds no
    bearer token (another scheme, nothing after it): a request that tried to
    authenticate and failed, never one that falls back to its cookie.
    """
    if authorization is None:
        return None
    scheme, _sep, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return ""
    return token.strip()


def token_row(token: str | None) -> BotToken | None:
    """The live token row of ``token`` (its account a bot, active), or ``None``."""
    if not token or not token.startswith(PREFIX) or len(token) > 200:
        return None
    wanted = digest_of(token)
    row = BotToken.objects.select_related("user").filter(digest=wanted).first()
    if row is None or not hmac.compare_digest(row.digest, wanted):
        return None
    if not (row.user.is_active and row.user.is_bot):
        return None
    return row


def user_for_token(token: str | None) -> Any | None:
    row = token_row(token)
    return None if row is None else row.user


# --- revoking ---------------------------------------------------------------


def close_sockets_after_commit(token_digest: str) -> None:
    """Once the transaction commits, close every socket opened with this token (4401)."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(revocation_group(token_digest), {"type": REVOKED})
        except Exception:
            # The token is dead in the database already: any socket's next
            # reconnection is refused. Only the prompt close was lost.
            log.exception("could not tell the sockets of a revoked token to close")

    transaction.on_commit(send)


# --- HTTP ---------------------------------------------------------------------


def _answer(code: str, message: str, status: int) -> JsonResponse:
    response = JsonResponse({"code": code, "message": message}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return response


def invalid_token() -> JsonResponse:
    return _answer("invalid_token", _("This API token is not valid (revoked or mistyped)."), 401)


def rate_limited() -> JsonResponse:
    response = _answer("rate_limited", _("Too many requests: slow down and try again."), 429)
    response["Retry-After"] = "60"
    return response


def over_limit(request: HttpRequest, group: str, key: Any, rate: str) -> bool:
    """Count this request against ``rate`` (django-ratelimit); whether it is over.

    The count lives in a cache (Redis with several processes). If that cache
    cannot be reached the request is let through: a limit is a brake, and a
    bot's whole API must not fail with it.
    """
    try:
        return bool(is_ratelimited(request, group=group, key=key, rate=rate, increment=True))
    except Exception:
        log.warning("the rate-limit cache does not answer; %s not counted", group)
        return False


def _token_key(group: str, request: HttpRequest) -> str:
    return str(request.bot_token.digest)  # type: ignore[attr-defined]


def _authenticate(request: HttpRequest, token: str) -> HttpResponse | None:
    """Make the token's account the request's user; an answer instead if refused."""
    row = token_row(token)
    if row is None:
        return invalid_token()
    request.bot_token = row  # type: ignore[attr-defined]
    if over_limit(request, "bot-token", _token_key, request_rate()):
        return rate_limited()
    user = row.user
    request.user = user
    request._cached_user = user  # type: ignore[attr-defined]

    async def auser() -> Any:
        return user

    request.auser = auser  # type: ignore[attr-defined]
    # A browser cannot send this header cross-site: no CSRF to fear (module docstring).
    request._dont_enforce_csrf_checks = True  # type: ignore[attr-defined]
    return None


def _token_of(request: HttpRequest) -> str | None:
    if not request.path_info.startswith(TOKEN_PATHS):
        return None
    return bearer(request.headers.get("Authorization"))


@sync_and_async_middleware
def bearer_auth(get_response: Any) -> Any:
    """Authenticate ``Authorization: Bearer`` requests on :data:`TOKEN_PATHS`.

    Goes after ``AuthenticationMiddleware`` (it replaces the user that one set)
    and before ``accounts.api.api_login_required``. A bad token is answered here,
    401 ``invalid_token``; too many requests, 429 ``rate_limited``.
    """
    if iscoroutinefunction(get_response):

        async def middleware_async(request: HttpRequest) -> HttpResponse:
            token = _token_of(request)
            if token is not None:
                refused = await sync_to_async(_authenticate)(request, token)
                if refused is not None:
                    return refused
            response: HttpResponse = await get_response(request)
            return response

        return middleware_async

    def middleware(request: HttpRequest) -> HttpResponse:
        token = _token_of(request)
        if token is not None and (refused := _authenticate(request, token)) is not None:
            return refused
        response: HttpResponse = get_response(request)
        return response

    return middleware
