"""The door: new work refused with 503 and ``Retry-After`` while saturated.

Saturation is ``matches.play.admission``'s to say.

Middleware, so that a refusal happens before a view writes anything (no
half-made match) and the views stay as they are. Only ``POST`` to a URL in
:data:`matches.play.admission.NEW_WORK` is ever refused; everything else, a live
match's page and its API included, is served whatever the load. ``/api/``
callers get JSON (``{"code": "overloaded", "message": …, "retry_after": s}``,
docs/protocol.md); pages get the 503 page (混雑しています).

Two doors. :func:`refuse_early` comes before the session is read: a saturated
process (or a new match the pacer has no start for) refuses there, in the
request's language and with nothing looked up (a refusal after the session, the
user and the token were read cost 2.5 ms of CPU, 0.4 ms before them — past
saturation the refused clients come back every few seconds, by the hundred).
:func:`refuse_when_saturated`, after authentication, takes the pacer's start
for a request let through, so that only someone's request spends one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import gettext as _

from matches.play import admission


def _new_work(request: HttpRequest) -> str | None:
    """The URL name of the new work this request would start, if any."""
    if request.method != "POST":
        return None
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return None
    if match.namespace == "matches" and match.url_name in admission.NEW_WORK:
        return str(match.url_name)
    return None


def busy_response(request: HttpRequest) -> HttpResponse:
    if not getattr(request, "LANGUAGE_CODE", None):
        # Before LocaleMiddleware (refuse_early): the language it would choose.
        language = translation.get_language_from_request(request)
        with translation.override(language):
            response = _busy(request)
        response.headers.setdefault("Content-Language", language)
        patch_vary_headers(response, ("Accept-Language", "Cookie"))
        return response
    return _busy(request)


def _busy(request: HttpRequest) -> HttpResponse:
    retry = admission.retry_after_s()
    response: HttpResponse
    if request.path_info.startswith("/api/"):
        message = _("The server is busy. Please try again in a few seconds.")
        body = {"code": "overloaded", "message": message, "retry_after": retry}
        response = JsonResponse(body, status=503)
    else:
        response = render(request, "503.html", {"retry_after": retry}, status=503)
    response["Retry-After"] = str(retry)
    # A refusal at the door is this process working as meant: counted and logged once
    # (``admission.refuse``, at INFO; ``sb_admission_refusals_total``), not again by
    # Django as a server error (bench-load past saturation logged thousands at ERROR).
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def _refused(request: HttpRequest) -> HttpResponse | None:
    what = _new_work(request)
    if what is None or admission.admit(what):
        return None
    return busy_response(request)


def _refused_early(request: HttpRequest) -> HttpResponse | None:
    what = _new_work(request)
    if what is None or not admission.refused_early(what):
        return None
    return busy_response(request)


def _door(refused: Callable[[HttpRequest], HttpResponse | None]) -> Any:
    """A middleware that answers ``refused(request)`` when it is a response."""

    @sync_and_async_middleware
    def door(get_response: Any) -> Any:
        if iscoroutinefunction(get_response):

            async def middleware_async(request: HttpRequest) -> HttpResponse:
                answer = refused(request)
                if answer is not None:
                    return answer
                response: HttpResponse = await get_response(request)
                return response

            return middleware_async

        def middleware(request: HttpRequest) -> HttpResponse:
            answer = refused(request)
            if answer is not None:
                return answer
            response: HttpResponse = get_response(request)
            return response

        return middleware

    return door


refuse_early = _door(_refused_early)
refuse_when_saturated = _door(_refused)
