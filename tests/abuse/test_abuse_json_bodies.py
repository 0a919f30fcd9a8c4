"""A JSON body that is no request a client could mean gets 400 ``bad_request`` and makes nothing.

The sockets refuse JSON nested past parsing (tests/webtier/test_frames_on_the_wire.py);
the HTTP API's bodies are read by the same parser, which gives up on deep nesting with a
``RecursionError`` rather than a ``ValueError``: it must be answered the same way, not
with a 500.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from matches.models import Match
from social.models import Block, Challenge, Follow, PushSubscription
from tests.support import make_user, use_embedded_default
from tournaments.models import Arena

DEPTH = 10_000  # far past the parser's recursion limit, a 20 KB body
NESTED = "[" * DEPTH + "]" * DEPTH
NESTED_IN_AN_OBJECT = '{"username": ' + NESTED + ', "level": ' + NESTED + "}"

# Every JSON endpoint that reads a body (docs/protocol.md §1, §6).
ENDPOINTS = [
    "/api/matches/same-device/",
    "/api/matches/computer/",
    "/api/challenges/",
    "/api/follows/",
    "/api/blocks/",
    "/api/presence/",
    "/api/push/",
    "/api/tournaments/",
]


@pytest.fixture(autouse=True)
def embedded(settings: Any, tmp_path: Any) -> Any:
    settings.VAPID_PRIVATE_KEY_FILE = str(tmp_path / "vapid_private.pem")
    return use_embedded_default(settings)


def _rows() -> list[int]:
    return [m.objects.count() for m in (Match, Challenge, Follow, Block, PushSubscription, Arena)]


@pytest.mark.parametrize("body", [NESTED, NESTED_IN_AN_OBJECT], ids=["nested", "in_an_object"])
@pytest.mark.parametrize("path", ENDPOINTS)
def test_json_nested_past_parsing_is_a_bad_request_and_makes_nothing(
    db: Any, path: str, body: str
) -> None:
    staff = make_user("staffer", is_staff=True)  # /api/tournaments/ reads staff's bodies only
    c = Client(raise_request_exception=False)
    c.force_login(staff)
    before = _rows()
    r = c.post(path, body, content_type="application/json")
    assert r.status_code == 400, (r.status_code, r.content[:200])
    assert r.json()["code"] == "bad_request" and r.json()["message"]
    assert _rows() == before
