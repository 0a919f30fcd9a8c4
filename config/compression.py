"""Gzip for HTML and JSON that carries no secret: BREACH.

BREACH recovers a secret from a compressed response's length when the same body
also reflects text an attacker chooses (a ``?next=`` in a link, a search term): the
attacker makes the victim's browser fetch the page many times and watches sizes.
Compression is only dangerous where a secret sits beside reflected input. So:

- a response that carries the CSRF token (any form, or htmx's ``X-CSRFToken``
  header in base.html) is sent uncompressed, masked token or not;
- a response to a logged-in player is sent uncompressed: it may hold that player's
  hidden tiles, invite codes or other per-account text;
- everything else (the landing page, the rules, the leaderboard, public profiles and
  replays for a visitor) is the same for every visitor, holds no secret, and is
  compressed by Django's GZipMiddleware (which also pads with Heal-the-BREACH).

Static files never get here: WhiteNoise serves them pre-compressed.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware

# How the CSRF token gets into a page: a form's hidden field, or base.html's htmx header.
# (The token's flag in request.META is no guide: a view's own csrf_protect clears it.)
_TOKEN_MARKS = (b"csrfmiddlewaretoken", b"X-CSRFToken")


def carries_secret(request: HttpRequest, response: HttpResponseBase) -> bool:
    """True when ``response`` may hold something one person must not learn."""
    user: Any = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return True
    if response.streaming:
        return True  # cannot be looked into without reading it: leave it as it is
    body = response.content  # type: ignore[attr-defined]
    return any(mark in body for mark in _TOKEN_MARKS)


class SafeGZipMiddleware(GZipMiddleware):
    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if carries_secret(request, response):
            return response
        return super().process_response(request, response)  # type: ignore[no-any-return]
