"""The match, lobby and arena sockets with ``Authorization: Bearer``: who gets in, the 4401 close.

Against the real ASGI application (``config.asgi``) and the real database; the
revocations go through ``accounts.bot_accounts`` as the profile page's do.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.utils import timezone

from accounts import bot_accounts
from config.asgi import application
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match, QueueEntry
from tournaments import services
from tournaments.models import Arena

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10
HOST = (b"host", b"localhost")


def token_headers(token: str) -> list[tuple[bytes, bytes]]:
    """A program's headers: the token, no cookie, no Origin."""
    return [HOST, (b"authorization", f"Bearer {token}".encode())]


def cookie_of(user: Any) -> tuple[bytes, bytes]:
    c = Client()
    c.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return (b"cookie", f"{name}={c.cookies[name].value}".encode())


async def opened(path: str, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await comm.connect(timeout=WAIT_S)
    assert connected
    return comm


async def next_frame(comm: WebsocketCommunicator) -> dict[str, Any]:
    message = await comm.receive_output(timeout=WAIT_S)
    assert message["type"] == "websocket.send", message
    return dict(json.loads(message["text"]))


async def closed_with(comm: WebsocketCommunicator) -> int:
    """The close code the server sends next (frames before it are skipped), within WAIT_S each."""
    try:
        while True:
            message = await comm.receive_output(timeout=WAIT_S)
            if message["type"] == "websocket.close":
                return int(message["code"])
    finally:
        await comm.disconnect()


@pytest.fixture
def match(robo: tuple[Any, str], alice: Any) -> Match:
    """alice invited, robo (a bot) accepted: robo plays seat 1."""
    return accept_invite(create_invite(alice).code, robo[0])


async def test_a_bot_plays_its_seat_with_the_token_alone(
    robo: tuple[Any, str], match: Match
) -> None:
    comm = await opened(f"/ws/matches/{match.pk}/", token_headers(robo[1]))
    try:
        first = await next_frame(comm)
        assert first["type"] == "state"
        assert first["view"]["seat"] == 1 and first["view"]["match"]["you"] == 1
        assert first["view"]["match"]["bots"] == [False, True]
        await comm.send_to(text_data=json.dumps({"op": "start", "version": 0}))
        pressed = await next_frame(comm)
        assert pressed["view"]["match"]["ready"] == [False, True]
    finally:
        await comm.disconnect()


@pytest.mark.parametrize(
    "authorization",
    [b"Bearer sbb_" + b"A" * 43, b"Bearer nonsense", b"Bearer", b"Basic cm9ibzpzZWNyZXQ="],
)
async def test_a_bad_token_is_closed_with_4401_even_with_a_good_cookie(
    match: Match, alice: Any, authorization: bytes
) -> None:
    cookie = await database_sync_to_async(cookie_of)(alice)
    headers = [HOST, (b"origin", b"http://localhost"), cookie, (b"authorization", authorization)]
    comm = await opened(f"/ws/matches/{match.pk}/", headers)
    assert await closed_with(comm) == 4401


async def test_without_a_token_the_origin_is_still_checked(match: Match, alice: Any) -> None:
    cookie = await database_sync_to_async(cookie_of)(alice)
    comm = await opened(f"/ws/matches/{match.pk}/", [HOST, cookie])  # a cookie, no Origin
    assert await closed_with(comm) == 4403


async def test_a_revoked_token_cannot_connect(robo: tuple[Any, str], match: Match) -> None:
    await database_sync_to_async(bot_accounts.revoke_token)(robo[0])
    for path in (f"/ws/matches/{match.pk}/", "/ws/lobby/"):
        assert await closed_with(await opened(path, token_headers(robo[1]))) == 4401


async def test_revoking_closes_the_open_sockets_at_once_and_only_those(
    robo: tuple[Any, str], match: Match, alice: Any
) -> None:
    bot = await opened(f"/ws/matches/{match.pk}/", token_headers(robo[1]))
    lobby = await opened("/ws/lobby/", token_headers(robo[1]))
    cookie = await database_sync_to_async(cookie_of)(alice)
    person = await opened(
        f"/ws/matches/{match.pk}/", [HOST, (b"origin", b"http://localhost"), cookie]
    )
    try:
        await next_frame(bot)
        await next_frame(lobby)
        await next_frame(person)
        await database_sync_to_async(bot_accounts.revoke_token)(robo[0])
        assert await closed_with(bot) == 4401
        assert await closed_with(lobby) == 4401
        # alice's socket lives on: her Start still reaches her.
        await person.send_to(text_data=json.dumps({"op": "start", "version": 0}))
        assert (await next_frame(person))["view"]["match"]["ready"] == [True, False]
    finally:
        await person.disconnect()


def _casual_arena() -> Arena:
    return services.create_arena("Bots welcome", 60, timezone.now(), rated=False)


async def test_revoking_closes_the_bots_arena_socket_too(robo: tuple[Any, str]) -> None:
    # docs/protocol.md §5: every socket opened with the old token is closed with 4401,
    # the arena's (§6: "session or token, as the other sockets") as much as any.
    arena = await database_sync_to_async(_casual_arena)()
    comm = await opened(f"/ws/tournaments/{arena.pk}/", token_headers(robo[1]))
    assert (await next_frame(comm))["type"] == "standings"
    await database_sync_to_async(bot_accounts.revoke_token)(robo[0])
    assert await closed_with(comm) == 4401


async def test_rotating_closes_the_old_tokens_socket_and_the_new_token_connects(
    robo: tuple[Any, str], match: Match
) -> None:
    old = await opened(f"/ws/matches/{match.pk}/", token_headers(robo[1]))
    await next_frame(old)
    new_token = await database_sync_to_async(bot_accounts.issue_token)(robo[0])
    assert await closed_with(old) == 4401
    new = await opened(f"/ws/matches/{match.pk}/", token_headers(new_token))
    try:
        assert (await next_frame(new))["view"]["seat"] == 1
    finally:
        await new.disconnect()


async def test_another_bots_revocation_leaves_a_socket_open(
    robo: tuple[Any, str], droid: tuple[Any, str], match: Match
) -> None:
    comm = await opened(f"/ws/matches/{match.pk}/", token_headers(robo[1]))
    try:
        await next_frame(comm)
        await database_sync_to_async(bot_accounts.revoke_token)(droid[0])
        await comm.send_to(text_data=json.dumps({"op": "sync"}))
        assert (await next_frame(comm))["type"] == "state"
    finally:
        await comm.disconnect()


async def test_a_bot_watching_another_match_sees_no_hand_and_cannot_act(
    droid: tuple[Any, str], match: Match
) -> None:
    comm = await opened(f"/ws/matches/{match.pk}/", token_headers(droid[1]))
    try:
        view = (await next_frame(comm))["view"]
        assert view["seat"] is None and view["match"]["watching"] is True and "hand" not in view
        await comm.send_to(text_data=json.dumps({"op": "start", "version": 0}))
        assert (await next_frame(comm))["code"] == "not_a_player"
    finally:
        await comm.disconnect()
    m = await database_sync_to_async(Match.objects.get)(pk=match.pk)
    assert m.ready == [False, False]


async def test_the_lobby_socket_refuses_a_bot_the_ranked_queue(robo: tuple[Any, str]) -> None:
    comm = await opened("/ws/lobby/", token_headers(robo[1]))
    try:
        assert (await next_frame(comm))["in_queue"] is False
        await comm.send_to(text_data=json.dumps({"op": "join"}))
        refused = await next_frame(comm)
        assert refused["type"] == "error" and refused["code"] == "bot_not_ranked"
        assert refused["message"]
    finally:
        await comm.disconnect()
    assert not await database_sync_to_async(QueueEntry.objects.exists)()
