"""The JSON API's answer to a caller without a session, and the middleware that gives it.

Every ``/api/`` endpoint needs a logged-in user. A scripted client that has no
session usually has no CSRF cookie either, and Django's CSRF check would
answer its POST with the HTML 403 page; ``api_login_required`` answers first,
with the documented ``401 {"code": "not_logged_in", "message": …}``. Logged-in
calls pass through and meet the CSRF check exactly as before.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import gettext as _

API_PREFIX = "/api/"


def not_logged_in() -> JsonResponse:
    return JsonResponse({"code": "not_logged_in", "message": _("Log in first.")}, status=401)


@sync_and_async_middleware
def api_login_required(get_response: Any) -> Any:
    """Answer anonymous ``/api/`` calls with 401 JSON before CSRF is checked.

    Goes after ``AuthenticationMiddleware`` (it reads the user); anywhere in the
    list is before the CSRF check, which runs in ``process_view`` once every
    middleware has seen the request.
    """
    if iscoroutinefunction(get_response):

        async def middleware_async(request: HttpRequest) -> HttpResponse:
            api = request.path_info.startswith(API_PREFIX)
            if api and not (await request.auser()).is_authenticated:
                return not_logged_in()
            response: HttpResponse = await get_response(request)
            return response

        return middleware_async

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(API_PREFIX) and not request.user.is_authenticated:
            return not_logged_in()
        response: HttpResponse = get_response(request)
        return response

    return middleware
