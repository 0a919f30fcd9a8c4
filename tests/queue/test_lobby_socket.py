"""The lobby socket: the queue's live view, presence, and being sent to the match."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from matches.lobby import matchmaking as queue
from matches.lobby.invites import accept_invite, create_invite
from matches.models import QueueEntry
from matches.play import timing
from matches.play.act import act
from matches.realtime.lobby_consumer import LobbyConsumer
from tests.support import SITE_HEADERS, connect_lobby

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 5.0


async def _next(comm: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    """The next frame of type ``kind`` (others are skipped) within the deadline."""
    loop = asyncio.get_running_loop()
    end = loop.time() + DEADLINE_S
    while True:
        left = end - loop.time()
        assert left > 0, f"no {kind!r} frame within {DEADLINE_S} s"
        frame = json.loads(await comm.receive_from(timeout=left))
        if frame["type"] == kind:
            return frame


async def test_the_socket_shows_the_queue_state_when_it_connects(alice: Any) -> None:
    comm = await connect_lobby(alice)
    try:
        first = await _next(comm, "queue")
        assert first["in_queue"] is False and first["rating"] == 1500
        await comm.send_to(text_data=json.dumps({"op": "join"}))
        joined = await _next(comm, "queue")
        assert joined["in_queue"] is True
        assert joined["window"] == 100 and joined["window_text"] == "±100"
        assert joined["schedule"] == {
            "start": 100,
            "step": 50,
            "every_s": 10,
            "unbounded_after_s": 60,
        }
        await comm.send_to(text_data=json.dumps({"op": "leave"}))
        assert (await _next(comm, "queue"))["in_queue"] is False
    finally:
        await comm.disconnect()


async def test_both_players_are_sent_to_the_new_match_at_once(alice: Any, bob: Any) -> None:
    a, b = await connect_lobby(alice), await connect_lobby(bob)
    try:
        await a.send_to(text_data=json.dumps({"op": "join"}))
        await _next(a, "queue")
        await b.send_to(text_data=json.dumps({"op": "join"}))
        pa, pb = await _next(a, "paired"), await _next(b, "paired")
        assert pa["match_id"] == pb["match_id"]
        assert pa["url"] == f"/matches/{pa['match_id']}/"
    finally:
        await a.disconnect()
        await b.disconnect()


async def test_a_player_in_a_match_is_told_why_they_cannot_join(alice: Any, bob: Any) -> None:
    inv = await database_sync_to_async(create_invite)(alice)
    await database_sync_to_async(accept_invite)(inv.code, bob)
    comm = await connect_lobby(alice)
    try:
        await comm.send_to(text_data=json.dumps({"op": "join"}))
        error = await _next(comm, "error")
        assert error["code"] == "busy"
    finally:
        await comm.disconnect()


async def test_an_anonymous_socket_is_refused() -> None:
    from django.contrib.auth.models import AnonymousUser

    comm = WebsocketCommunicator(LobbyConsumer.as_asgi(), "/ws/lobby/", headers=SITE_HEADERS)
    comm.scope["user"] = AnonymousUser()
    connected, _ = await comm.connect()
    assert connected  # accepted, then closed with the code (docs/protocol.md)
    closed = await comm.receive_output()
    assert closed == {"type": "websocket.close", "code": 4401}
    await comm.disconnect()


async def test_the_30_seconds_count_from_when_the_lobby_socket_closed(
    alice: Any, clock: Any
) -> None:
    await database_sync_to_async(queue.join)(alice)
    comm = await connect_lobby(alice)
    await _next(comm, "queue")
    clock.shift(20)
    await comm.send_to(text_data=json.dumps({"op": "ping"}))
    clock.shift(20)
    await comm.disconnect()  # 40 s after joining; seen just now
    clock.shift(29.9)
    await database_sync_to_async(queue.sweep)()
    assert await QueueEntry.objects.filter(user=alice).aexists()
    clock.shift(0.2)
    await database_sync_to_async(queue.sweep)()
    assert not await QueueEntry.objects.filter(user=alice).aexists()


async def test_a_player_dropped_from_the_queue_is_told_on_their_other_tabs(
    alice: Any, clock: Any
) -> None:
    comm = await connect_lobby(alice)
    try:
        await _next(comm, "queue")
        await database_sync_to_async(queue.join)(alice, pair=False)
        assert (await _next(comm, "queue"))["in_queue"] is True
        clock.shift(31)  # the server's presence refresh is every 10 s of real time
        await database_sync_to_async(queue.sweep)()
        assert (await _next(comm, "queue"))["in_queue"] is False
    finally:
        await comm.disconnect()


async def _paired(alice: Any, bob: Any) -> Any:
    """Alice and Bob join the queue, no lobby socket open: the second join pairs them."""
    await database_sync_to_async(queue.join)(alice)
    match = (await database_sync_to_async(queue.join)(bob)).match
    assert match is not None
    return match


async def _first_after_status(comm: WebsocketCommunicator) -> dict[str, Any]:
    """The frame after the connect's ``queue`` frame, asking for a status to bound it:
    a ``paired`` frame sent at connect comes before the status's answer."""
    assert json.loads(await comm.receive_from(timeout=DEADLINE_S))["type"] == "queue"
    await comm.send_to(text_data=json.dumps({"op": "status"}))
    return json.loads(await comm.receive_from(timeout=DEADLINE_S))


async def test_a_socket_opened_after_the_pairing_is_still_sent_to_the_match(
    alice: Any, bob: Any
) -> None:
    # Paired while neither lobby socket was open (a reload, a reconnect): the push
    # went nowhere, and without a second chance the start window would close and
    # charge both a no-show.
    match = await _paired(alice, bob)
    for user in (alice, bob):
        comm = await connect_lobby(user)
        try:
            frame = await _first_after_status(comm)
            assert frame == {
                "type": "paired",
                "match_id": match.pk,
                "url": f"/matches/{match.pk}/",
            }
        finally:
            await comm.disconnect()


async def test_once_start_is_pressed_the_lobby_no_longer_sends_the_player_back(
    alice: Any, bob: Any
) -> None:
    match = await _paired(alice, bob)
    await database_sync_to_async(act)(
        match.pk, alice, {"op": "start", "version": match.version}, timing.now_ms()
    )
    comm = await connect_lobby(alice)
    try:
        assert (await _first_after_status(comm))["type"] == "queue"  # no paired frame
    finally:
        await comm.disconnect()
    comm = await connect_lobby(bob)  # bob has not pressed it yet
    try:
        assert (await _first_after_status(comm))["type"] == "paired"
    finally:
        await comm.disconnect()


async def test_a_waiting_casual_match_does_not_pull_the_player_from_the_lobby(
    alice: Any, bob: Any
) -> None:
    inv = await database_sync_to_async(create_invite)(alice)
    await database_sync_to_async(accept_invite)(inv.code, bob)
    comm = await connect_lobby(alice)
    try:
        assert (await _first_after_status(comm))["type"] == "queue"
    finally:
        await comm.disconnect()
