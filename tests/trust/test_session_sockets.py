"""A session's end closes its sockets within a second (issue 16, "A socket after logout").

A player opens a match socket and a lobby socket, then in the same browser logs
out (HTTP), or changes the password from another browser, or staff deactivate
the account in the admin: the sockets of every session that ended are closed
with 4401 within 1 s, and a ``sync`` sent on one afterwards gets nothing. The
session that changed its own password keeps its sockets. Each case runs on the
in-memory channel layer and on Redis (the pub/sub layer production uses).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from config.settings import redis_channel_layer
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match
from tests.support import PASSWORD
from tests.trust.client import Browser, closed_within, login, match_socket, socket

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 1.0
NEW_PASSWORD = "an entirely different passphrase 42"


@pytest.fixture(params=["memory", "redis"])
def layer(request: pytest.FixtureRequest, settings: Any) -> str:
    if request.param == "redis":
        url = request.getfixturevalue("require_redis")
        prefix = f"sbtrust{uuid.uuid4().hex[:8]}"
        settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url, prefix=prefix)}
    return str(request.param)


def _casual(a: Any, b: Any) -> Match:
    return accept_invite(create_invite(a).code, b)


def _logout(browser: Browser) -> None:
    assert browser.http.post("/accounts/logout/").status_code in (200, 302)


def _change_password(browser: Browser) -> None:
    response = browser.http.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content[:500]


def _deactivate_in_admin(user: Any) -> None:
    staff = get_user_model().objects.create_superuser("referee", password=PASSWORD)
    admin = Browser(staff).http
    form = admin.get(f"/admin/accounts/user/{user.pk}/change/")
    assert form.status_code == 200
    joined = user.date_joined
    response = admin.post(
        f"/admin/accounts/user/{user.pk}/change/",
        {
            "username": user.username,
            "date_joined_0": joined.strftime("%Y-%m-%d"),
            "date_joined_1": joined.strftime("%H:%M:%S"),
            # is_active left out: the box unticked.
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    user.refresh_from_db()
    assert user.is_active is False


async def _assert_dead(comm: Any, seconds: float = DEADLINE_S) -> None:
    code, took = await closed_within(comm, seconds)
    assert code == 4401 and took <= seconds
    await comm.send_json_to({"op": "sync"})
    assert await comm.receive_nothing(timeout=0.3)


async def test_logout_closes_that_sessions_match_and_lobby_sockets_only(
    layer: str, alice: Any, bob: Any
) -> None:
    match = await database_sync_to_async(_casual)(alice, bob)
    here, elsewhere = await login(alice), await login(alice)
    sock = await match_socket(here, match.pk)
    lobby = await socket(here, "/ws/lobby/")
    other = await match_socket(elsewhere, match.pk)
    try:
        await lobby.receive_json_from(timeout=5)
        await database_sync_to_async(_logout)(here)
        await _assert_dead(sock.comm)
        await _assert_dead(lobby)
        # The match did not move, and alice's other browser is still connected.
        m = await database_sync_to_async(Match.objects.get)(pk=match.pk)
        assert m.version == 0 and m.status == Match.Status.WAITING
        await other.send({"op": "sync"})
        assert (await other.until(lambda f: f["type"] == "state"))["version"] == 0
    finally:
        for comm in (sock.comm, lobby, other.comm):
            await comm.disconnect()


async def test_a_password_change_closes_every_socket_opened_before_it(
    layer: str, alice: Any, bob: Any
) -> None:
    match = await database_sync_to_async(_casual)(alice, bob)
    old, changer = await login(alice), await login(alice)
    stale = await match_socket(old, match.pk)
    own = await match_socket(changer, match.pk)
    try:
        await database_sync_to_async(_change_password)(changer)
        await _assert_dead(stale.comm)
        # The changing browser stays logged in under a new session key (Django's
        # cycle_key): the socket opened with the old key closes too, and a new
        # socket with the new cookie plays on.
        await _assert_dead(own.comm)
        again = await match_socket(changer, match.pk)
        await again.send({"op": "start", "version": 0})
        pressed = await again.until(lambda f: f["type"] == "state" and f["version"] == 1)
        assert pressed["view"]["match"]["ready"] == [True, False]
        await again.comm.disconnect()
        # The old browser is logged out for HTTP too.
        response = await database_sync_to_async(old.http.get)(f"/matches/{match.pk}/")
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    finally:
        await stale.comm.disconnect()
        await own.comm.disconnect()


async def test_deactivation_by_staff_closes_every_socket_of_the_account(
    layer: str, alice: Any, bob: Any
) -> None:
    match = await database_sync_to_async(_casual)(alice, bob)
    browser = await login(bob)
    sock = await match_socket(browser, match.pk)
    try:
        await database_sync_to_async(_deactivate_in_admin)(bob)
        await _assert_dead(sock.comm)
        m = await database_sync_to_async(Match.objects.get)(pk=match.pk)
        assert m.version == 0
    finally:
        await sock.comm.disconnect()


async def test_a_session_that_ended_before_the_socket_joined_is_refused(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race: the session ends after the consumer read it but before it joined
    # the user's group. The second look after joining catches it.
    from matches.realtime import session_sockets

    match = await database_sync_to_async(_casual)(alice, bob)
    browser = await login(alice)
    real = session_sockets.ClosedWithSession.watch_session

    async def late(self: Any, user: Any, **kwargs: Any) -> bool:
        await database_sync_to_async(_logout)(browser)
        return bool(await real(self, user, **kwargs))

    monkeypatch.setattr(session_sockets.ClosedWithSession, "watch_session", late)
    comm = await socket(browser, f"/ws/matches/{match.pk}/")
    try:
        message = await comm.receive_output(timeout=5)
        assert message["type"] == "websocket.close" and message["code"] == 4401
    finally:
        await comm.disconnect()


async def test_a_socket_outliving_its_group_membership_still_closes(
    alice: Any, bob: Any, settings: Any
) -> None:
    # A layer that forgets group members after 1 s: the socket joins again (and
    # re-checks its session) every half expiry, so a logout 2 s later still reaches it.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "matches.realtime.layers.InMemoryLayer",
            "CONFIG": {"group_expiry": 1},
        }
    }
    match = await database_sync_to_async(_casual)(alice, bob)
    browser = await login(alice)
    sock = await match_socket(browser, match.pk)
    try:
        assert await sock.comm.receive_nothing(timeout=2.0)  # past the expiry
        await database_sync_to_async(_logout)(browser)
        code, _ = await closed_within(sock.comm, DEADLINE_S)
        assert code == 4401
    finally:
        await sock.comm.disconnect()
