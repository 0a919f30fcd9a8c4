"""The harness's bulk accounts: each bot starts logged in, with no password hashed per user."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from loadtest import accounts

pytestmark = pytest.mark.django_db


def live_matches_as(sessionid: str) -> int:
    client = Client()
    client.cookies["sessionid"] = sessionid
    return client.get("/api/matches/live/").status_code


def test_each_bot_gets_a_session_that_is_logged_in() -> None:
    made = accounts.create(3, "bulkbot")
    assert [name for name, _ in made] == ["bulkbot00001", "bulkbot00002", "bulkbot00003"]
    assert len({key for _, key in made}) == 3
    for _, key in made:
        assert live_matches_as(key) == 200
    assert live_matches_as("no-such-session") == 401


def test_the_bots_can_log_in_with_their_password(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    accounts.create(1, "bulkbot")
    r = Client().post(
        "/accounts/login/", {"username": "bulkbot00001", "password": accounts.PASSWORD}
    )
    assert r.status_code == 302  # logged in (a wrong password shows the form again)


def test_a_second_run_reuses_the_users_with_fresh_sessions() -> None:
    first = accounts.create(2, "bulkbot")
    again = accounts.create(3, "bulkbot")
    assert [n for n, _ in again][:2] == [n for n, _ in first]
    for _, key in again:
        assert live_matches_as(key) == 200
