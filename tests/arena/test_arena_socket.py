"""The arena socket: standings on connect and when they change, the pairing, presence."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from tests.arena.conftest import players
from tests.support import SITE_HEADERS
from tournaments import push, services
from tournaments.consumers import ArenaConsumer
from tournaments.models import Arena, Entry

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 5.0


async def connect(arena: Arena, user: Any, query: str = "") -> WebsocketCommunicator:
    path = f"/ws/tournaments/{arena.pk}/{query}"
    comm = WebsocketCommunicator(ArenaConsumer.as_asgi(), path, headers=SITE_HEADERS)
    comm.scope["user"] = user
    comm.scope["url_route"] = {"kwargs": {"arena_id": arena.pk}}
    connected, _ = await comm.connect()
    assert connected
    return comm


async def next_frame(comm: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = loop.time() + DEADLINE_S
    while True:
        left = end - loop.time()
        assert left > 0, f"no {kind!r} frame within {DEADLINE_S} s"
        frame = json.loads(await comm.receive_from(timeout=left))
        if frame["type"] == kind:
            return frame


async def test_the_page_gets_the_standings_changes_and_is_sent_to_its_match(
    arena: Arena,
) -> None:
    a, b = await database_sync_to_async(players)(2)
    await database_sync_to_async(services.join)(arena.pk, a)
    ca = await connect(arena, a)
    try:
        first = await next_frame(ca, "standings")
        assert [r["username"] for r in first["standings"]] == ["p0"] and first["count"] == 1
        assert (await next_frame(ca, "you"))["you"]["waiting"] is True
        await database_sync_to_async(services.join)(arena.pk, b)
        await database_sync_to_async(push.push_standings)()  # the 1 s job
        pushed = await next_frame(ca, "standings")
        assert pushed["count"] == 2
        result = await database_sync_to_async(services.pair_arena)(arena.pk)
        paired = await next_frame(ca, "paired")
        assert paired["url"] == f"/matches/{result.paired[0]}/"
    finally:
        await ca.disconnect()


async def test_a_pairing_committed_just_after_the_connects_read_is_still_pushed(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page reloads after 参加 and the pairing pass runs while its socket connects:
    whichever side of the first read the pairing falls, the socket learns of it."""
    from tournaments import consumers

    a, b = await database_sync_to_async(players)(2)
    for p in (a, b):
        await database_sync_to_async(services.join)(arena.pk, p)
    made: list[int] = []
    read = consumers._initial

    def read_then_pair(arena_id: int, user_id: int, table: bool = True) -> Any:
        first = read(arena_id, user_id, table)
        made.extend(services.pair_arena(arena_id).paired)  # committed after the read
        return first

    monkeypatch.setattr(consumers, "_initial", read_then_pair)
    ca = await connect(arena, a)
    try:
        assert (await next_frame(ca, "you"))["you"]["match_id"] is None  # read before it
        paired = await next_frame(ca, "paired")
        assert len(made) == 1 and paired["url"] == f"/matches/{made[0]}/"
    finally:
        await ca.disconnect()


async def test_an_open_socket_keeps_the_player_present(arena: Arena) -> None:
    (a,) = await database_sync_to_async(players)(1)
    await database_sync_to_async(services.join)(arena.pk, a)
    old = timezone.now() - timedelta(minutes=5)
    await database_sync_to_async(Entry.objects.filter(user=a).update)(last_seen=old)
    ca = await connect(arena, a)
    await next_frame(ca, "standings")
    seen = await database_sync_to_async(lambda: Entry.objects.get(user=a).last_seen)()
    assert seen > old + timedelta(minutes=4)
    await ca.disconnect()


async def test_a_ping_flood_is_refused_then_closed_and_not_written(
    arena: Arena, monkeypatch: Any
) -> None:
    # The frame budget of the match and lobby sockets (docs/protocol.md § Limits): each
    # ping is a presence write, so a flood must not become one write a frame.
    (a,) = await database_sync_to_async(players)(1)
    await database_sync_to_async(services.join)(arena.pk, a)
    comm = await connect(arena, a, "?bar=1")
    await next_frame(comm, "you")
    writes = []
    real_touch = services.touch
    monkeypatch.setattr(services, "touch", lambda *args: writes.append(args) or real_touch(*args))
    started = asyncio.get_running_loop().time()
    for _ in range(1000):
        await comm.send_to(text_data='{"op": "ping"}')
    errors = 0
    while True:
        message = await comm.receive_output(timeout=DEADLINE_S)
        if message["type"] == "websocket.close":
            break
        frame = json.loads(message["text"])
        assert frame["type"] == "error" and frame["code"] == "rate_limited" and frame["message"]
        errors += 1
    took = asyncio.get_running_loop().time() - started
    assert message["code"] == 4429 and errors == 20
    # The burst of 20, and what 5 a second refilled meanwhile.
    assert 1 <= len(writes) <= 20 + 5 * took + 1, (len(writes), took)
    await comm.disconnect()


async def test_an_anonymous_socket_and_an_unknown_arena_are_refused(arena: Arena) -> None:
    (a,) = await database_sync_to_async(players)(1)
    for user, arena_id, code in ((AnonymousUser(), arena.pk, 4401), (a, arena.pk + 99, 4403)):
        path = f"/ws/tournaments/{arena_id}/"
        comm = WebsocketCommunicator(ArenaConsumer.as_asgi(), path, headers=SITE_HEADERS)
        comm.scope["user"] = user
        comm.scope["url_route"] = {"kwargs": {"arena_id": arena_id}}
        connected, _ = await comm.connect()
        assert connected  # accepted, then closed with the code
        assert await comm.receive_output() == {"type": "websocket.close", "code": code}
        await comm.disconnect()


def _table(n: int, version: int | None = 7) -> dict[str, Any]:
    rows = [
        {"rank": i + 1, "username": f"u{i}", "points": 2 * (n - i), "streak": 0, "played": 1}
        for i in range(n)
    ]
    event = {"arena": {"id": 99, "name": "夜のアリーナ"}, "standings": rows}
    return event if version is None else {**event, "version": version}


@pytest.mark.parametrize("n", [0, 3, push.TOP_ROWS, push.TOP_ROWS + 40])
@pytest.mark.django_db(transaction=False)
def test_a_push_encoded_once_is_the_frame_each_socket_would_have_made(n: int) -> None:
    from tournaments.consumers import Encoded, cut

    table = _table(n)
    names = ["u0", f"u{max(n - 1, 0)}", f"u{push.TOP_ROWS + 5}", "nobody"]
    one = Encoded(table)
    for name in names:
        frame = json.loads(one.text(name))
        assert frame == cut(table, name), name
        assert one.text(name) == json.dumps(cut(table, name)), name
    # A player below the top rows finds their own row after the top ones; others do not.
    if n > push.TOP_ROWS + 5:
        mine = json.loads(one.text(f"u{push.TOP_ROWS + 5}"))["standings"]
        assert len(mine) == push.TOP_ROWS + 1 and mine[-1]["username"] == f"u{push.TOP_ROWS + 5}"
        assert len(json.loads(one.text("nobody"))["standings"]) == push.TOP_ROWS


@pytest.mark.django_db(transaction=False)
def test_each_push_version_is_encoded_once_and_a_new_version_is_encoded_again() -> None:
    from tournaments.consumers import encoded

    first = encoded(_table(5, version=1))
    assert encoded(_table(5, version=1)) is first  # another socket's copy of the same push
    later = encoded(_table(6, version=2))
    assert later is not first and json.loads(later.text("u0"))["count"] == 6
    # A message without a version (an older process's push) is encoded for itself.
    assert encoded(_table(4, version=None)) is not encoded(_table(4, version=None))


async def test_the_match_bar_socket_gets_the_players_news_but_never_the_table(
    arena: Arena,
) -> None:
    """The bar on an arena match's page (``?bar=1``) draws no table: at 500 players the
    table was 8 KB a second to every player in a match, for nothing."""
    a, b = await database_sync_to_async(players)(2)
    await database_sync_to_async(services.join)(arena.pk, a)
    comm = await connect(arena, a, "?bar=1")
    page = await connect(arena, a)  # the arena page's socket, for comparison
    try:
        assert (await next_frame(page, "standings"))["count"] == 1
        await database_sync_to_async(services.join)(arena.pk, b)
        await database_sync_to_async(push.push_standings)()  # the 1 s job
        assert (await next_frame(page, "standings"))["count"] == 2
        result = await database_sync_to_async(services.pair_arena)(arena.pk)
        url = f"/matches/{result.paired[0]}/"
        assert (await next_frame(page, "paired"))["url"] == url
        # The bar got the same news, in order, and nothing of the table.
        seen = []
        while not seen or seen[-1]["type"] != "paired":
            seen.append(json.loads(await comm.receive_from(timeout=DEADLINE_S)))
        assert [f["type"] for f in seen if f["type"] != "you"] == ["paired"]
        assert seen[0]["type"] == "you" and seen[0]["you"]["waiting"] is True
        assert seen[-1]["url"] == url
        assert await comm.receive_nothing(timeout=0.3)
        # It keeps the player present as the page's socket does.
        seen_at = await database_sync_to_async(lambda: Entry.objects.get(user=a).last_seen)()
        assert seen_at > timezone.now() - timedelta(seconds=30)
    finally:
        await comm.disconnect()
        await page.disconnect()


async def test_the_process_refreshes_every_open_sockets_presence_at_once(
    arena: Arena, monkeypatch: Any
) -> None:
    """One UPDATE an arena every PRESENCE_EVERY_S for all the arena sockets a process holds
    (not a timer and a write per socket), and a closed socket's player is let go."""
    from tournaments import consumers

    monkeypatch.setattr(consumers, "PRESENCE_EVERY_S", 0.2)
    a, b = await database_sync_to_async(players)(2)
    for p in (a, b):
        await database_sync_to_async(services.join)(arena.pk, p)
    ca, cb = await connect(arena, a), await connect(arena, b)
    try:
        for c in (ca, cb):
            await next_frame(c, "you")
        assert consumers.held() == {arena.pk: sorted([a.pk, b.pk])}
        old = timezone.now() - timedelta(minutes=5)
        await database_sync_to_async(Entry.objects.filter(arena=arena).update)(last_seen=old)
        touched: list[dict[int, list[int]]] = []
        touch_many = services.touch_many
        loop = asyncio.get_running_loop()
        refreshed = asyncio.Event()

        def counting(held: dict[int, list[int]]) -> int:  # on a match thread
            touched.append(held)
            n = touch_many(held)
            loop.call_soon_threadsafe(refreshed.set)
            return n

        monkeypatch.setattr(services, "touch_many", counting)
        await asyncio.wait_for(refreshed.wait(), DEADLINE_S)
        assert touched[0] == {arena.pk: sorted([a.pk, b.pk])}  # both in one call
        recent = Entry.objects.filter(arena=arena, last_seen__gt=old + timedelta(minutes=4))
        assert await database_sync_to_async(recent.count)() == 2
    finally:
        await ca.disconnect()
    assert consumers.held() == {arena.pk: [b.pk]}
    await cb.disconnect()
    assert consumers.held() == {}


def test_the_table_is_read_once_a_version_and_again_after_any_change(arena: Arena) -> None:
    """Pages opening at the same standings version share one read of the table; a join, a
    pause, a result (anything that moves the version) is in the next page's table."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tournaments import standings

    a, b = players(2)
    services.join(arena.pk, a)
    first = standings.table(arena.pk)
    with CaptureQueriesContext(connection) as q:
        again = standings.table(arena.pk)
    assert again["standings"] is first["standings"] and len(q.captured_queries) == 1  # the arena
    services.join(arena.pk, b)
    assert [r["username"] for r in standings.table(arena.pk)["standings"]] == ["p0", "p1"]
    services.pause(arena.pk, b)
    assert standings.table(arena.pk)["standings"][1]["state"] == Entry.State.PAUSED


async def test_logging_out_closes_the_arena_socket_of_that_session(arena: Arena) -> None:
    # As the match and lobby sockets: a shared computer's arena tab stops receiving the
    # player's pairings the moment the player logs out there.
    from tests.support import PASSWORD, make_user
    from tests.trust.client import closed_within, login, socket

    a = await database_sync_to_async(make_user)("shared", PASSWORD)
    browser = await login(a)
    comm = await socket(browser, f"/ws/tournaments/{arena.pk}/")
    try:
        assert json.loads(await comm.receive_from(timeout=DEADLINE_S))["type"] == "standings"
        response = await database_sync_to_async(browser.http.post)("/accounts/logout/")
        assert response.status_code in (200, 302)
        code, _took = await closed_within(comm, DEADLINE_S)
        assert code == 4401
    finally:
        await comm.disconnect()


async def test_arena_sockets_count_among_the_accounts_sockets(arena: Arena, settings: Any) -> None:
    settings.SOCKETS_PER_USER = 2
    (a,) = await database_sync_to_async(players)(1)
    first, second = await connect(arena, a), await connect(arena, a)
    third = await connect(arena, a)
    try:
        closed = await third.receive_output(timeout=DEADLINE_S)
        while closed["type"] != "websocket.close":
            closed = await third.receive_output(timeout=DEADLINE_S)
        assert closed["code"] == 4430
        await first.disconnect()  # one closes: a new one fits again
        fourth = await connect(arena, a)
        assert (await next_frame(fourth, "you"))["type"] == "you"
        await fourth.disconnect()
    finally:
        for comm in (second, third):
            await comm.disconnect()


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"op": "ping"',
        "[1, 2]",
        '"ping"',
        '{"op": "nope", "note": "ping"}',
        '{"op": ["ping"]}',
        "[" * 5000 + "]" * 5000,
        '{"op": "ping", "pad": "' + "x" * 2000 + '"}',
    ],
)
async def test_a_frame_that_is_not_a_ping_gets_an_error_and_writes_nothing(
    arena: Arena, monkeypatch: Any, text: str
) -> None:
    """As on the lobby and match sockets: a clear error frame, and no presence write
    (a frame merely containing "ping" counted as one)."""
    (a,) = await database_sync_to_async(players)(1)
    await database_sync_to_async(services.join)(arena.pk, a)
    comm = await connect(arena, a, "?bar=1")
    await next_frame(comm, "you")
    writes: list[Any] = []
    written = asyncio.Event()
    loop = asyncio.get_running_loop()

    def touch(*args: Any) -> None:  # on a match thread
        writes.append(args)
        loop.call_soon_threadsafe(written.set)

    monkeypatch.setattr(services, "touch", touch)
    await comm.send_to(text_data=text)
    frame = await next_frame(comm, "error")
    assert frame["code"] == "bad_request" and frame["message"]
    assert "Traceback" not in frame["message"] and "ping" not in frame["message"]
    await comm.send_to(text_data='{"op": "ping"}')  # the socket still serves a real one
    await asyncio.wait_for(written.wait(), DEADLINE_S)
    assert writes == [(arena.pk, a.pk)]
    assert await comm.receive_nothing(timeout=0.05)  # and answered nothing else
    await comm.disconnect()
