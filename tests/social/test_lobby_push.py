"""The lobby socket carries notifications to every open page within a second, and
its being open is what makes a player online."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from social import blocks, challenges, friends
from tests.support import connect_lobby

pytestmark = pytest.mark.django_db(transaction=True)

WITHIN_S = 1.0


async def _next(comm: WebsocketCommunicator, kind: str, within: float = WITHIN_S) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        left = end - loop.time()
        assert left > 0, f"no {kind!r} frame within {within} s"
        frame = json.loads(await comm.receive_from(timeout=left))
        if frame["type"] == kind:
            return frame


async def test_a_challenge_reaches_both_open_pages_of_the_challenged_within_a_second(
    alice: Any, bob: Any
) -> None:
    tab1, tab2 = await connect_lobby(bob), await connect_lobby(bob)
    try:
        ch = await database_sync_to_async(challenges.create)(alice, "bob")
        for tab in (tab1, tab2):
            frame = await _next(tab, "notification")
            n = frame["notification"]
            assert n["kind"] == "challenge" and n["from"] == "alice"
            assert n["challenge"] == {"id": ch.pk, "status": "open",
                                      "expires_at": ch.expires_at.isoformat()}  # fmt: skip
            assert frame["unread"] == 1
    finally:
        await tab1.disconnect()
        await tab2.disconnect()


async def test_the_challenger_is_sent_to_the_match_when_accepted(alice: Any, bob: Any) -> None:
    page = await connect_lobby(alice)
    try:
        ch = await database_sync_to_async(challenges.create)(alice, "bob")
        m = await database_sync_to_async(challenges.accept)(ch.pk, bob)
        frame = await _next(page, "notification")
        assert frame["notification"]["kind"] == "challenge_accepted"
        assert frame["notification"]["url"] == f"/matches/{m.pk}/"
    finally:
        await page.disconnect()


async def test_a_cancelled_challenge_is_taken_off_the_challenged_page(alice: Any, bob: Any) -> None:
    page = await connect_lobby(bob)
    try:
        ch = await database_sync_to_async(challenges.create)(alice, "bob")
        await _next(page, "notification")
        await database_sync_to_async(challenges.cancel)(ch.pk, alice)
        assert (await _next(page, "challenge_closed"))["id"] == ch.pk
    finally:
        await page.disconnect()


async def test_an_open_lobby_socket_makes_a_followed_player_online(alice: Any, bob: Any) -> None:
    await database_sync_to_async(blocks.follow)(alice, bob)
    listed = await database_sync_to_async(friends.following)(alice, online_only=True)
    assert listed == []
    page = await connect_lobby(bob)
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 2.0
        while True:  # the presence stamp is written from the socket's database thread
            listed = await database_sync_to_async(friends.following)(alice, online_only=True)
            if listed or loop.time() > end:
                break
            await asyncio.sleep(0.05)
        assert [f.user.username for f in listed] == ["bob"]
        assert listed[0].online and listed[0].match_id is None
    finally:
        await page.disconnect()


async def test_a_ranked_pairing_is_a_notification_for_both(alice: Any, bob: Any) -> None:
    from matches.lobby import matchmaking as queue

    page = await connect_lobby(alice)
    try:
        await database_sync_to_async(queue.join)(alice, pair=False)
        result = await database_sync_to_async(queue.join)(bob)
        assert result.match is not None
        frame = await _next(page, "notification")
        assert frame["notification"]["kind"] == "match_found"
        assert frame["notification"]["url"] == f"/matches/{result.match.pk}/"
    finally:
        await page.disconnect()


async def test_a_ranked_rematch_is_not_announced_as_a_match_found(alice: Any, bob: Any) -> None:
    from matches.models import Match
    from matches.play import seating
    from social.models import Notification

    def ranked_rematch() -> None:
        from django.db import transaction

        with transaction.atomic():
            seating.new_match(Match.Kind.RANKED, alice, bob)  # as rematch.py makes it

    await database_sync_to_async(ranked_rematch)()
    count = await database_sync_to_async(Notification.objects.count)()
    assert count == 0


async def test_an_arena_starting_is_a_notification_once_for_its_players(
    alice: Any, bob: Any, carol: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from social.models import Notification
    from tournaments import services as arenas

    def set_up() -> int:
        arena = arenas.create_arena("Evening", 60, timezone.now() + timedelta(minutes=5), False)
        for u in (alice, bob, carol):
            arenas.join(arena.pk, u)
        arenas.withdraw(arena.pk, carol)  # withdrawn before the start: not told
        return int(arena.pk)

    arena_id = await database_sync_to_async(set_up)()
    page = await connect_lobby(alice)
    try:
        # Before the start the pass says nothing; once it runs, each player hears it once.
        await database_sync_to_async(arenas.pairing_pass)(timezone.now())
        assert await database_sync_to_async(Notification.objects.count)() == 0
        later = timezone.now() + timedelta(minutes=6)
        await database_sync_to_async(arenas.pairing_pass)(later)
        frame = await _next(page, "notification")
        assert frame["notification"]["kind"] == "arena_started"
        assert frame["notification"]["url"] == f"/tournaments/{arena_id}/"
        await database_sync_to_async(arenas.pairing_pass)(later)  # the next pass: no repeat

        def told() -> list[tuple[str, str]]:
            rows = Notification.objects.filter(kind="arena_started").select_related("user")
            return sorted((n.user.username, n.kind) for n in rows)

        assert await database_sync_to_async(told)() == [
            ("alice", "arena_started"),
            ("bob", "arena_started"),
        ]
    finally:
        await page.disconnect()


async def test_an_accepted_invite_tells_its_creator_on_every_open_page(
    alice: Any, bob: Any
) -> None:
    from matches.lobby import invites

    page = await connect_lobby(alice)  # the creator stepped away from the invite page
    try:
        inv = await database_sync_to_async(invites.create_invite)(alice)
        m = await database_sync_to_async(invites.accept_invite)(inv.code, bob)
        frame = await _next(page, "notification")
        n = frame["notification"]
        assert (n["kind"], n["from"], n["url"]) == ("invite_accepted", "bob", f"/matches/{m.pk}/")
        assert "開始" in n["text"] or "Start" in n["text"]
    finally:
        await page.disconnect()


async def test_a_refused_accept_tells_nobody(alice: Any, bob: Any) -> None:
    from matches.lobby import invites
    from matches.play.errors import ServiceError
    from social.models import Notification

    inv = await database_sync_to_async(invites.create_invite)(alice)
    with pytest.raises(ServiceError):
        await database_sync_to_async(invites.accept_invite)(inv.code, alice)  # one's own
    assert await database_sync_to_async(Notification.objects.count)() == 0
