"""Log-in lockout: 10 failures per (username, address) pair, or 50 per address, lock for 15 min.

Each test runs on the stopped ``clock`` (tests.support.START), so the time the
page promises is known to the minute.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client, RequestFactory

from accounts.lockout import client_ip
from tests.support import PASSWORD, START

pytestmark = pytest.mark.usefixtures("clock")

ATTACKER = "198.51.100.7"
ELSEWHERE = "203.0.113.20"
LIMIT = 10  # per (username, address)
ADDRESS_LIMIT = 50  # per address, whatever the names
# The lock set at START lifts 15 minutes later, shown in the site's time zone (Tokyo).
LOCK_LIFTS = (START + timedelta(minutes=15)).astimezone(ZoneInfo("Asia/Tokyo")).strftime("%H:%M")
LOCKED_JA = "ログインの失敗が続いたため"


def log_in(
    client: Client, username: str, password: str, ip: str = ATTACKER, **headers: str
) -> HttpResponse:
    response: HttpResponse = client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip, **headers
    )
    return response


def is_logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail(client: Client, username: str, times: int, ip: str = ATTACKER) -> list[int]:
    return [log_in(client, username, "wrong password", ip).status_code for _ in range(times)]


def test_nine_failures_then_the_right_password_logs_in(client: Client, alice: Any) -> None:
    assert fail(client, "alice", LIMIT - 1) == [200] * (LIMIT - 1)
    response = log_in(client, "alice", PASSWORD)
    assert response.status_code == 302
    assert is_logged_in(client)


def test_ten_failures_lock_the_username_and_the_right_password_is_refused(
    client: Client, alice: Any
) -> None:
    # The tenth failure already answers with the lockout page.
    assert fail(client, "alice", LIMIT) == [200] * (LIMIT - 1) + [429]

    response = log_in(client, "alice", PASSWORD)
    assert response.status_code == 429
    assert not is_logged_in(client)
    page = response.content.decode()
    assert LOCKED_JA in page
    assert f"{LOCK_LIFTS}以降" in page
    assert "約15分後" in page
    assert 'name="password"' in page  # the log-in page itself, not a bare error


def test_the_lockout_message_is_in_english_for_english_readers(client: Client, alice: Any) -> None:
    fail(client, "alice", LIMIT)
    response = log_in(client, "alice", PASSWORD, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed log-ins" in page
    assert f"Try again after {LOCK_LIFTS} (in about 15 minutes)" in page


def test_the_owner_logs_in_from_another_address_while_the_guesser_is_locked(
    client: Client, alice: Any
) -> None:
    fail(client, "alice", LIMIT)
    owner = Client()
    assert log_in(owner, "alice", PASSWORD, ip=ELSEWHERE).status_code == 302
    assert is_logged_in(owner)
    # The guesser's address stays locked for that name, the right password included.
    assert log_in(Client(), "alice", PASSWORD, ip=ATTACKER).status_code == 429


def test_another_user_from_another_address_is_unaffected(
    client: Client, alice: Any, bob: Any
) -> None:
    fail(client, "alice", LIMIT)
    response = log_in(Client(), "bob", PASSWORD, ip=ELSEWHERE)
    assert response.status_code == 302


def test_fifty_failures_from_one_address_over_several_usernames_lock_the_address(
    client: Client, alice: Any, bob: Any
) -> None:
    names = ["alice", "carol", "dave", "erin", "frank", "gina", "hal", "ida", "jo", "kim"]
    statuses = [  # five tries each, real names or not: no pair reaches its limit
        log_in(client, names[i % 10], "guess", ip=ATTACKER).status_code
        for i in range(ADDRESS_LIMIT)
    ]
    assert statuses[-2] == 200 and statuses[-1] == 429

    # bob never failed, but his right password from that address is refused...
    victim = Client()
    assert log_in(victim, "bob", PASSWORD, ip=ATTACKER).status_code == 429
    assert not is_logged_in(victim)
    # ...while from another address it works.
    assert log_in(victim, "bob", PASSWORD, ip=ELSEWHERE).status_code == 302


def test_the_lockout_ends_after_fifteen_minutes(
    client: Client, alice: Any, clock: time_machine.Traveller
) -> None:
    fail(client, "alice", LIMIT)
    clock.shift(timedelta(minutes=14, seconds=59))
    assert log_in(client, "alice", PASSWORD).status_code == 429

    clock.shift(timedelta(seconds=2))  # 15 min 1 s after the tenth failure
    response = log_in(client, "alice", PASSWORD)
    assert response.status_code == 302
    assert is_logged_in(client)


def test_tries_during_the_lockout_do_not_push_its_end_back(
    client: Client, alice: Any, clock: time_machine.Traveller
) -> None:
    fail(client, "alice", LIMIT)
    clock.shift(timedelta(minutes=10))
    response = log_in(client, "alice", "wrong again")
    assert response.status_code == 429
    assert f"{LOCK_LIFTS}以降" in response.content.decode()  # still the same time
    assert "約5分後" in response.content.decode()

    clock.shift(timedelta(minutes=5, seconds=1))
    assert log_in(client, "alice", PASSWORD).status_code == 302


def test_failures_older_than_the_cool_off_no_longer_count(
    client: Client, alice: Any, clock: time_machine.Traveller
) -> None:
    fail(client, "alice", LIMIT - 1)
    clock.shift(timedelta(minutes=16))
    assert fail(client, "alice", LIMIT - 1) == [200] * (LIMIT - 1)
    assert log_in(client, "alice", PASSWORD).status_code == 302


def test_a_locked_out_attempt_is_refused_without_hashing_the_password(
    client: Client, alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail(client, "alice", LIMIT)
    checked: list[str] = []
    real = get_user_model().check_password

    def spy(self: Any, raw: str) -> bool:
        checked.append(raw)
        return bool(real(self, raw))

    monkeypatch.setattr(get_user_model(), "check_password", spy)
    for _ in range(5):
        assert log_in(client, "alice", PASSWORD).status_code == 429
    assert checked == []  # a flood of locked-out tries costs no hashing
    assert log_in(Client(), "alice", "wrong", ip=ATTACKER).status_code == 429
    assert checked == []


def test_a_spoofed_forwarded_for_header_does_not_escape_the_address_lock(
    client: Client, alice: Any, bob: Any
) -> None:
    for i in range(ADDRESS_LIMIT):
        log_in(client, f"carol{i}", "guess", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    # Without TRUSTED_PROXY_COUNT the header is ignored: all fifty came from ATTACKER.
    response = log_in(client, "bob", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert response.status_code == 429


def test_behind_a_trusted_proxy_clients_are_told_apart_by_forwarded_for(
    client: Client, alice: Any, bob: Any, settings: Any
) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.1"
    for i in range(ADDRESS_LIMIT):  # a name each: only the address's limit is reached
        log_in(client, f"carol{i}", "guess", ip=proxy, HTTP_X_FORWARDED_FOR=ATTACKER)
    assert (
        log_in(Client(), "bob", PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR=ATTACKER).status_code
        == 429
    )
    # Another client behind the same proxy is not locked out with the attacker...
    assert (
        log_in(Client(), "bob", PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR=ELSEWHERE).status_code
        == 302
    )
    # ...and the attacker cannot choose its address by writing the header itself:
    # the proxy appends what it saw, and only that entry is believed.
    spoofed = f"{ELSEWHERE}, {ATTACKER}"
    assert (
        log_in(Client(), "bob", PASSWORD, ip=proxy, HTTP_X_FORWARDED_FOR=spoofed).status_code == 429
    )


@pytest.mark.parametrize(
    ("count", "forwarded", "expected"),
    [
        (0, "192.0.2.1", "10.0.0.1"),  # not configured: the header is ignored
        (1, "192.0.2.1", "192.0.2.1"),
        (1, "6.6.6.6, 192.0.2.1", "192.0.2.1"),  # the client's own entry is not believed
        (2, "6.6.6.6, 192.0.2.1, 10.0.0.9", "192.0.2.1"),
        (2, "192.0.2.1", "10.0.0.1"),  # fewer hops than proxies: did not come through them
        (1, "not-an-address", "10.0.0.1"),
        (1, "", "10.0.0.1"),
        (1, " 2001:db8::1 ", "2001:db8::1"),
    ],
)
def test_client_ip(settings: Any, count: int, forwarded: str, expected: str) -> None:
    settings.TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected


async def test_the_lockout_page_under_asgi(transactional_db: Any) -> None:
    """Daphne runs django-axes' middleware asynchronously: the same page there."""
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from tests.support import make_user

    await sync_to_async(make_user)("alice", PASSWORD)
    client = AsyncClient()
    form = {"username": "alice", "password": "wrong"}
    statuses = [(await client.post("/accounts/login/", form)).status_code for _ in range(LIMIT)]
    assert statuses == [200] * (LIMIT - 1) + [429]
    response = await client.post("/accounts/login/", {**form, "password": PASSWORD})
    assert response.status_code == 429
    assert f"{LOCK_LIFTS}以降" in response.content.decode()
