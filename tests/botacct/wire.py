"""Helpers for the tests that talk to a real server (``tests.processes.WebProcess``) as a bot
or as the bot's owner in a browser, over plain HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from http.cookies import SimpleCookie
from typing import Any

WAIT_S = 10


def api(server: str, path: str, token: str) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(server + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=WAIT_S) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def revoke_in_browser(server: str, username: str, session: str) -> int:
    """As the logged-in owner (``session``: ``name=value``), GET the bot's profile (for
    the CSRF cookie) and POST its revoke form; the answer's status (302: done)."""
    opener = urllib.request.build_opener(NoRedirect())
    profile = urllib.request.Request(f"{server}/u/{username}/", headers={"Cookie": session})
    page = opener.open(profile)
    jar = SimpleCookie()
    for header in page.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    csrf = jar["csrftoken"].value
    form = urllib.request.Request(
        f"{server}/accounts/bot/token/",
        data=b"op=revoke",
        headers={"Cookie": f"{session}; csrftoken={csrf}", "X-CSRFToken": csrf},
    )
    try:
        return int(opener.open(form).status)
    except urllib.error.HTTPError as e:
        return e.code


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
