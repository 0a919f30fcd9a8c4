"""A NUL character in a name or an invite code finds nothing: 404 (or the form's refusal), not 500.

No username (accounts/names.py) nor invite code holds one, and PostgreSQL text cannot:
looking one up raised ``DataError``, a 500, on the profile and invite pages of anonymous
visitors as much as on the API. Each answer here is the one an unknown name or code gets.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from matches.models import Invite, Match
from social.models import Block, Challenge, Follow, PushSubscription
from tests.support import use_embedded_default

NUL_NAME = "bo\x00b"  # the path's %00, decoded
NUL_IN_PATH = "bo%00b"


@pytest.fixture(autouse=True)
def embedded(settings: Any, tmp_path: Any) -> Any:
    settings.VAPID_PRIVATE_KEY_FILE = str(tmp_path / "vapid_private.pem")
    return use_embedded_default(settings)


def _rows() -> list[int]:
    return [m.objects.count() for m in (Match, Invite, Challenge, Follow, Block, PushSubscription)]


def _client(user: Any | None) -> Client:
    c = Client(raise_request_exception=False)
    if user is not None:
        c.force_login(user)
    return c


@pytest.mark.parametrize("anonymous", [True, False], ids=["anonymous", "logged_in"])
@pytest.mark.parametrize(
    "path",
    [f"/u/{NUL_IN_PATH}/", f"/u/{NUL_IN_PATH}/matches/", f"/invites/{NUL_IN_PATH}/"],
)
def test_public_pages_of_a_name_or_code_with_a_nul_are_not_found(
    alice: Any, bob: Any, path: str, anonymous: bool
) -> None:
    assert _client(None if anonymous else alice).get(path).status_code == 404


def test_player_pages_of_a_name_or_code_with_a_nul_are_not_found_and_change_nothing(
    alice: Any, bob: Any
) -> None:
    c = _client(alice)
    before = _rows()
    assert c.get(f"/u/{NUL_IN_PATH}/report/").status_code == 404
    assert c.post(f"/u/{NUL_IN_PATH}/report/", {"reason": "x"}).status_code == 404
    assert c.get(f"/invites/{NUL_IN_PATH}/status/").status_code == 404
    for action in ("accept", "cancel"):  # the form's way back, saying why
        assert c.post(f"/invites/{NUL_IN_PATH}/{action}/").status_code == 302
    for op in ("follow", "block", "unfollow", "unblock"):
        assert c.post(f"/{op}/", {"username": NUL_NAME}).status_code == 404
    assert c.post("/challenges/", {"username": NUL_NAME}).status_code == 302
    assert _rows() == before


def test_the_api_answers_a_name_or_code_with_a_nul_as_an_unknown_one(alice: Any, bob: Any) -> None:
    c = _client(alice)
    before = _rows()
    answers = [
        c.post(f"/api/invites/{NUL_IN_PATH}/accept/"),
        c.delete(f"/api/follows/{NUL_IN_PATH}/"),
        c.delete(f"/api/blocks/{NUL_IN_PATH}/"),
    ] + [
        c.post(path, json.dumps({"username": NUL_NAME}), content_type="application/json")
        for path in ("/api/follows/", "/api/blocks/", "/api/challenges/")
    ]
    for r in answers:
        assert r.status_code == 404, (r.status_code, r.content[:200])
        assert r.json()["code"] == "not_found" and r.json()["message"]
    bad_push = {"endpoint": "https://push.example/\x00", "keys": {"p256dh": "k", "auth": "a"}}
    r = c.post("/api/push/", json.dumps(bad_push), content_type="application/json")
    assert r.status_code == 400 and r.json()["code"] == "bad_request"
    assert _rows() == before


@pytest.mark.parametrize(
    "cookie",
    ['sessionid="abcdefgh\\000xyz"', "sessionid=abcdefgh\x00xyz", 'sessionid="\\377abcdefgh"'],
    ids=["escaped_nul", "raw_nul", "escaped_latin1"],
)
def test_a_session_cookie_that_is_no_session_key_is_no_session_not_a_500(
    alice: Any, cookie: str
) -> None:
    # The cookie parser decodes a quoted value's octal escapes: plain ASCII on the wire.
    c = Client(raise_request_exception=False, HTTP_COOKIE=cookie)
    for path in ("/", "/rules/", "/accounts/login/", f"/u/{alice.username}/"):
        assert c.get(path).status_code == 200, path
    r = c.get("/api/matches/live/")
    assert r.status_code == 401 and r.json()["code"] == "not_logged_in"
