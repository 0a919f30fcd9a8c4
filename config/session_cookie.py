"""A session cookie that no session key could be is no session: dropped before it is read.

Django's database sessions look the cookie's key up as it comes. The cookie parser
decodes a quoted value's octal escapes, so ``Cookie: sessionid="abcdefgh\\000"`` (plain
ASCII on the wire) is a key holding NUL, which PostgreSQL refuses in a query: every
page answered 500 to such a client. A session key is ASCII letters and digits
(``django.contrib.sessions``' ``VALID_KEY_CHARS``); any other cookie is treated as no
session at all, as the sockets already treat it (``matches.realtime.socket_auth``).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware

# A signed-cookie session is not a key to look up (and holds other characters).
_NOT_A_KEY = "django.contrib.sessions.backends.signed_cookies"


def _drop_if_malformed(request: HttpRequest) -> None:
    name = settings.SESSION_COOKIE_NAME
    key = request.COOKIES.get(name)
    if key is None or settings.SESSION_ENGINE == _NOT_A_KEY:
        return
    if not (key.isascii() and key.isalnum()):
        del request.COOKIES[name]


@sync_and_async_middleware
def drop_malformed_session_cookie(get_response: Any) -> Any:
    """Goes just before ``SessionMiddleware``."""
    if iscoroutinefunction(get_response):

        async def middleware_async(request: HttpRequest) -> HttpResponse:
            _drop_if_malformed(request)
            response: HttpResponse = await get_response(request)
            return response

        return middleware_async

    def middleware(request: HttpRequest) -> HttpResponse:
        _drop_if_malformed(request)
        response: HttpResponse = get_response(request)
        return response

    return middleware
