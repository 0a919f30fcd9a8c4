"""Probe "sign-up flood": 30 sign-ups in a burst from one address; 10 an hour get through.

Each refused sign-up is a 429 page saying (in Japanese by default) that no
account was made and for how long, with ``Retry-After``; it creates nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client

from tests.abuse.helpers import SIGNUP_PASSWORD, sign_up

pytestmark = pytest.mark.usefixtures("clock")  # the hour's window cannot roll over mid-test

LIMIT = 10  # settings.SIGNUP_RATE, "10/h"
FLOOD = "198.51.100.66"
LIMITED_JA = "このネットワークからのアカウント作成が多すぎるため、アカウントは作成されませんでした"


def people() -> list[str]:
    return sorted(
        get_user_model()
        .objects.filter(computer_level__isnull=True)
        .values_list("username", flat=True)
    )


def test_thirty_sign_ups_from_one_address_make_ten_accounts(db: Any) -> None:
    statuses = [sign_up(Client(), f"flood{i}", ip=FLOOD).status_code for i in range(30)]
    assert statuses == [302] * LIMIT + [429] * 20
    assert people() == sorted(f"flood{i}" for i in range(LIMIT))


def test_the_refusal_says_why_and_for_how_long_and_creates_nothing(db: Any) -> None:
    for i in range(LIMIT):
        sign_up(Client(), f"flood{i}", ip=FLOOD)
    before = people()
    client = Client()
    response = sign_up(client, "one-more", ip=FLOOD)
    page = response.content.decode()
    assert response.status_code == 429
    assert LIMITED_JA in page and "分後にもう一度お試しください" in page
    assert 0 < int(response["Retry-After"]) <= 3600
    assert 'name="username"' in page  # the sign-up page itself, not a bare error
    assert people() == before
    assert "_auth_user_id" not in client.session

    english = sign_up(Client(), "one-more", ip=FLOOD, HTTP_ACCEPT_LANGUAGE="en")
    assert "Too many new accounts from your network" in english.content.decode()


def test_another_address_still_signs_up(db: Any) -> None:
    for i in range(LIMIT + 1):
        sign_up(Client(), f"flood{i}", ip=FLOOD)
    assert sign_up(Client(), "neighbour", ip="203.0.113.5").status_code == 302
    assert "neighbour" in people()


def test_refused_forms_do_not_use_up_the_allowance(db: Any) -> None:
    for _ in range(15):  # a person fumbling: mismatched passwords, nothing hashed or created
        r = Client().post(
            "/signup/",
            {"username": "fumbler", "password1": SIGNUP_PASSWORD, "password2": "typo"},
            REMOTE_ADDR=FLOOD,
        )
        assert r.status_code == 200
    assert people() == []
    assert sign_up(Client(), "fumbler", ip=FLOOD).status_code == 302


def test_ipv6_addresses_count_by_their_64(db: Any) -> None:
    statuses = [
        sign_up(Client(), f"six{i}", ip=f"2001:db8:1:2::{i + 1:x}").status_code
        for i in range(LIMIT + 1)
    ]
    assert statuses == [302] * LIMIT + [429]  # eleven addresses, one /64: one allowance
    assert sign_up(Client(), "other64", ip="2001:db8:1:3::1").status_code == 302


def test_behind_a_trusted_proxy_the_client_address_counts(db: Any, settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.1"
    for i in range(LIMIT):
        sign_up(Client(), f"flood{i}", ip=proxy, HTTP_X_FORWARDED_FOR=FLOOD)
    assert sign_up(Client(), "x1", ip=proxy, HTTP_X_FORWARDED_FOR=FLOOD).status_code == 429
    # A spoofed entry of the client's own is not believed; another client is not held.
    spoofed = f"203.0.113.9, {FLOOD}"
    assert sign_up(Client(), "x2", ip=proxy, HTTP_X_FORWARDED_FOR=spoofed).status_code == 429
    assert sign_up(Client(), "x3", ip=proxy, HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 302


def test_the_allowance_comes_back_after_the_hour(db: Any, clock: time_machine.Traveller) -> None:
    for i in range(LIMIT + 1):
        sign_up(Client(), f"flood{i}", ip=FLOOD)
    clock.shift(3601)
    assert sign_up(Client(), "later", ip=FLOOD).status_code == 302


def test_on_redis_every_process_counts_the_same_sign_ups(
    db: Any, settings: Any, require_redis: str
) -> None:
    """The services set-up: the count lives in Redis, where every web process reads it."""
    import secrets

    import redis

    prefix = f"test-signup-{secrets.token_hex(4)}"
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": require_redis,
            "KEY_PREFIX": prefix,
        },
    }
    r = redis.Redis.from_url(require_redis)
    try:
        for i in range(LIMIT):
            assert sign_up(Client(), f"flood{i}", ip=FLOOD).status_code == 302
        assert r.keys(f"{prefix}:*")  # counted in Redis, not in this process
        # A new connection (as another process would open) reads the same count.
        from django.core.cache import caches

        caches["ratelimit"].close()
        assert sign_up(Client(), "one-more", ip=FLOOD).status_code == 429
        assert "one-more" not in people()
    finally:
        for key in r.scan_iter(f"{prefix}:*"):
            r.delete(key)
        r.close()
