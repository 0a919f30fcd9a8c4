"""The site's PBKDF2 hasher: Django's hashes, computed one at a time on a low-priority thread.

These tests use the production hasher list (tests elsewhere keep the fast MD5
hasher), so each hash costs Django's real iteration count, about half a second.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth import hashers as django_hashers
from django.contrib.auth.hashers import check_password, identify_hasher, make_password

from accounts import hashers

PRODUCTION_HASHERS = [
    "accounts.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
PASSWORD = "正しい馬の電池の留め具"
SALT = "fixedsaltfortests12345"


@pytest.fixture
def production_hashers(settings: Any) -> Iterator[None]:
    settings.PASSWORD_HASHERS = PRODUCTION_HASHERS
    yield


@pytest.fixture
def fresh_pool(monkeypatch: pytest.MonkeyPatch) -> hashers._Pool:
    """A pool of this test's own, made under this test's settings."""
    pool = hashers._Pool()
    monkeypatch.setattr(hashers, "pool", pool)
    return pool


@pytest.fixture
def derivations(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every PBKDF2 key derivation Django makes: on which thread, at what niceness,
    and how many ran at the same moment."""
    real = django_hashers.pbkdf2
    seen: list[dict[str, Any]] = []
    lock = threading.Lock()
    running = [0]

    def spy(*args: Any, **kwargs: Any) -> bytes:
        with lock:
            running[0] += 1
            seen.append(
                {
                    "thread": threading.current_thread().name,
                    "nice": os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
                    "running": running[0],
                }
            )
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(django_hashers, "pbkdf2", spy)
    return seen


def test_it_hashes_exactly_as_djangos_pbkdf2() -> None:
    ours = hashers.PBKDF2PasswordHasher()
    django = django_hashers.PBKDF2PasswordHasher()
    assert ours.algorithm == django.algorithm == "pbkdf2_sha256"
    assert ours.iterations == django.iterations
    assert ours.encode(PASSWORD, SALT) == django.encode(PASSWORD, SALT)
    assert ours.encode(PASSWORD, SALT, 1000) == django.encode(PASSWORD, SALT, 1000)
    assert ours.encode(PASSWORD + "!", SALT) != django.encode(PASSWORD, SALT)


@pytest.mark.usefixtures("production_hashers")
def test_a_hash_stored_by_djangos_hasher_still_verifies() -> None:
    stored = django_hashers.PBKDF2PasswordHasher().encode(PASSWORD, SALT)
    assert isinstance(identify_hasher(stored), hashers.PBKDF2PasswordHasher)
    assert check_password(PASSWORD, stored)
    assert not check_password("wrong", stored)


@pytest.mark.usefixtures("production_hashers")
def test_a_new_hash_verifies_with_djangos_hasher() -> None:
    stored = make_password(PASSWORD)
    assert stored.startswith("pbkdf2_sha256$")
    assert django_hashers.PBKDF2PasswordHasher().verify(PASSWORD, stored)
    assert not django_hashers.PBKDF2PasswordHasher().verify("wrong", stored)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
@pytest.mark.usefixtures("production_hashers", "fresh_pool")
def test_the_derivation_runs_on_a_low_priority_thread_of_its_own(
    derivations: list[dict[str, Any]],
) -> None:
    me = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert check_password(PASSWORD, make_password(PASSWORD))
    assert [d["thread"].startswith("password-hash") for d in derivations] == [True, True]
    assert {d["nice"] for d in derivations} == {hashers.LOWEST_PRIORITY}
    # Only that thread was lowered: the caller (a request or a match) keeps its priority.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == me < 19


@pytest.mark.usefixtures("production_hashers", "fresh_pool")
def test_concurrent_log_ins_all_complete_correctly_one_hash_at_a_time(
    derivations: list[dict[str, Any]],
) -> None:
    stored = django_hashers.PBKDF2PasswordHasher().encode(PASSWORD, SALT)
    derivations.clear()  # that one was Django's own, on this thread
    tries = [PASSWORD, "wrong", PASSWORD, PASSWORD + " ", PASSWORD, "正しい馬"]
    with ThreadPoolExecutor(max_workers=len(tries)) as requests:
        results = list(requests.map(lambda p: check_password(p, stored), tries))
    assert results == [True, False, True, False, True, False]
    assert len(derivations) == len(tries)
    assert all(d["thread"].startswith("password-hash") for d in derivations)
    assert max(d["running"] for d in derivations) == 1  # the others waited their turn
