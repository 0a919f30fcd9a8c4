"""Probe "lockout abuse": wrong passwords for someone else's name lock the guesser, not the owner.

Usernames are public (the leaderboard). Ten wrong passwords for ``alice`` from
one address lock that (name, address) pair; alice, from her own address, still
logs in, and the guesser's further tries change nothing (no new failure
counted, the lock's end not pushed back). The staff's ``/admin/login/`` is under
the same lockout.
"""

from __future__ import annotations

from typing import Any

import pytest
from axes.models import AccessAttempt
from django.db.models import Sum
from django.test import Client

from tests.abuse.helpers import log_in, logged_in
from tests.support import PASSWORD, make_user

pytestmark = pytest.mark.usefixtures("clock")

GUESSER = "198.51.100.13"
OWNER_HOME = "203.0.113.44"
LOCKED_JA = "ログインの失敗が続いたため"


def failures() -> int:
    return int(AccessAttempt.objects.aggregate(n=Sum("failures_since_start"))["n"] or 0)


def test_ten_wrong_passwords_for_someone_elses_name_do_not_lock_the_owner_out(alice: Any) -> None:
    guesser = Client()
    statuses = [log_in(guesser, "alice", "guess", ip=GUESSER).status_code for _ in range(10)]
    assert statuses == [200] * 9 + [429]
    counted = failures()
    assert counted == 10

    # The guesser is locked for that name, even with the right password; nothing changes.
    for password in ("another guess", PASSWORD):
        response = log_in(guesser, "alice", password, ip=GUESSER)
        assert response.status_code == 429 and LOCKED_JA in response.content.decode()
        assert not logged_in(guesser)
    assert failures() == counted

    # The owner, from her own address, logs in at once.
    owner = Client()
    response = log_in(owner, "alice", PASSWORD, ip=OWNER_HOME)
    assert response.status_code == 302
    assert logged_in(owner)
    assert owner.get("/").status_code == 200


def test_the_guesser_moving_to_other_names_is_stopped_by_the_address_limit(
    alice: Any, bob: Any
) -> None:
    guesser = Client()
    for i in range(50):  # five tries for each of ten names: no pair is locked
        assert log_in(guesser, f"name{i % 10}", "guess", ip=GUESSER).status_code in (200, 429)
    response = log_in(guesser, "bob", PASSWORD, ip=GUESSER)
    assert response.status_code == 429 and not logged_in(guesser)
    # bob and alice from elsewhere are not affected.
    for name in ("alice", "bob"):
        c = Client()
        assert log_in(c, name, PASSWORD, ip=OWNER_HOME).status_code == 302 and logged_in(c)


def test_the_admin_log_in_is_under_the_same_lockout(db: Any) -> None:
    make_user("root-staff", PASSWORD, is_staff=True, is_superuser=True)
    guesser = Client()
    form = {"username": "root-staff", "password": "guess", "next": "/admin/"}
    statuses = [
        guesser.post("/admin/login/", form, REMOTE_ADDR=GUESSER).status_code for _ in range(10)
    ]
    assert statuses == [200] * 9 + [429]
    right = {**form, "password": PASSWORD}
    assert guesser.post("/admin/login/", right, REMOTE_ADDR=GUESSER).status_code == 429
    assert not logged_in(guesser)
    assert failures() == 10
    # The staff member, from elsewhere, gets in.
    staff = Client()
    response = staff.post("/admin/login/", right, REMOTE_ADDR=OWNER_HOME)
    assert response.status_code == 302 and logged_in(staff)
    assert staff.get("/admin/").status_code == 200
