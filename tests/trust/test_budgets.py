"""Budgets with a clear answer that change nothing (issue 16, "Frame flood" and item 4).

Each limit is taken past its edge from outside, over HTTP or a socket, with the
numbers made small by settings (the defaults are in config/settings.py and
docs/protocol.md): the refused request is answered with its code and changes
nothing, and the budget comes back when its window has passed.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async

from matches.lobby.invites import accept_invite, create_invite
from matches.models import Invite, Match, QueueEntry
from tests.support import START
from tests.trust.client import Browser, login, match_socket, socket

pytestmark = pytest.mark.django_db(transaction=True)


def _post_json(browser: Browser, path: str, body: Any = None) -> Any:
    return browser.http.post(path, json.dumps(body or {}), content_type="application/json")


@pytest.mark.parametrize(
    ("what", "setting", "path", "body", "made"),
    [
        ("invites", "INVITES_PER_HOUR", "/api/invites/", None, "invites"),
        ("same-device", "SAME_DEVICE_PER_HOUR", "/api/matches/same-device/",
         {"guest_name": "Ken"}, "matches"),
        ("computer", "COMPUTER_MATCHES_PER_HOUR", "/api/matches/computer/",
         {"level": 1}, "matches"),
    ],
)  # fmt: skip
def test_creations_per_user_and_hour(
    what: str, setting: str, path: str, body: Any, made: str, alice: Any, settings: Any
) -> None:
    setattr(settings, setting, 2)
    browser = Browser(alice)

    def count() -> int:
        return Invite.objects.count() if made == "invites" else Match.objects.count()

    with time_machine.travel(START, tick=False) as clock:
        for _ in range(2):
            assert _post_json(browser, path, body).status_code == 200
            clock.shift(timedelta(minutes=10))
        before = count()
        refused = _post_json(browser, path, body)
        assert refused.status_code == 429
        answer = refused.json()
        assert answer["code"] == "rate_limited" and answer["message"]
        # Retry when the first of the hour's two leaves the window.
        assert answer["retry_at"] == int((START + timedelta(hours=1)).timestamp() * 1000)
        assert count() == before
        clock.shift(timedelta(minutes=40, seconds=1))  # 1 h after the first
        assert _post_json(browser, path, body).status_code == 200
        assert count() == before + 1


def test_queue_joins_per_user_and_minute(alice: Any, settings: Any) -> None:
    settings.QUEUE_JOINS_PER_MINUTE = 3
    browser = Browser(alice)
    htmx = {"HTTP_HX_REQUEST": "true"}
    with time_machine.travel(START, tick=False) as clock:
        for _ in range(3):
            browser.http.post("/queue/join/", **htmx)
            assert QueueEntry.objects.filter(user=alice).exists()
            browser.http.post("/queue/leave/", **htmx)
        refused = browser.http.post("/queue/join/", **htmx)
        assert refused.status_code == 200
        card = refused.content.decode()
        assert 'data-testid="queue-error"' in card and 'queue-error" hidden' not in card
        assert not QueueEntry.objects.filter(user=alice).exists()
        clock.shift(timedelta(seconds=61))
        browser.http.post("/queue/join/", **htmx)
        assert QueueEntry.objects.filter(user=alice).exists()


async def test_a_frame_flood_is_refused_then_closed(alice: Any, bob: Any) -> None:
    match = await database_sync_to_async(lambda: accept_invite(create_invite(alice).code, bob))()
    sock = await match_socket(await login(alice), match.pk)
    try:
        started = time.monotonic()
        for _ in range(1000):
            await sock.comm.send_to(text_data='{"op": "sync"}')
        states = errors = 0
        while True:
            message = await sock.comm.receive_output(timeout=10)
            if message["type"] == "websocket.close":
                code = message["code"]
                break
            frame = json.loads(message["text"])
            if frame["type"] == "state":
                states += 1
            else:
                assert frame["code"] == "rate_limited" and frame["message"]
                errors += 1
        took = time.monotonic() - started
        assert code == 4429
        # The burst of 20, and what 5 a second refilled meanwhile; then 20 refusals.
        assert 20 <= states <= 20 + 5 * took + 1
        assert errors == 20
        m = await database_sync_to_async(Match.objects.get)(pk=match.pk)
        assert m.version == 0
    finally:
        await sock.comm.disconnect()


async def test_a_client_within_the_budget_is_never_refused(alice: Any, bob: Any) -> None:
    match = await database_sync_to_async(lambda: accept_invite(create_invite(alice).code, bob))()
    sock = await match_socket(await login(alice), match.pk)
    try:
        for _ in range(20):  # the whole burst at once
            await sock.send({"op": "sync"})
        got = [await sock.recv() for _ in range(20)]
        for _ in range(5):  # then a frame every 0.25 s: under the refill of 5 a second
            await asyncio.sleep(0.25)  # the client's pace, not a wait for the server
            await sock.send({"op": "sync"})
            got.append(await sock.recv())
        assert [f["type"] for f in got] == ["state"] * 25
    finally:
        await sock.comm.disconnect()


async def _close_code(comm: Any) -> int | None:
    message = await comm.receive_output(timeout=5)
    return int(message["code"]) if message["type"] == "websocket.close" else None


async def test_sockets_per_user(alice: Any, bob: Any, settings: Any) -> None:
    settings.SOCKETS_PER_USER = 3
    match = await database_sync_to_async(lambda: accept_invite(create_invite(alice).code, bob))()
    browser = await login(alice)
    open_ = [await socket(browser, "/ws/lobby/"), await socket(browser, f"/ws/matches/{match.pk}/")]
    open_.append(await socket(browser, f"/ws/matches/{match.pk}/"))
    try:
        extra = await socket(browser, "/ws/lobby/")
        assert await _close_code(extra) == 4430
        await extra.disconnect()
        # bob is not alice: his own sockets are counted apart.
        bobs = await match_socket(await login(bob), match.pk)
        await bobs.comm.disconnect()
        # One of alice's closes: a new one fits again.
        await open_.pop().disconnect()
        again = await socket(browser, f"/ws/matches/{match.pk}/")
        first = json.loads((await again.receive_output(timeout=5))["text"])
        assert first["type"] == "state"
        open_.append(again)
    finally:
        for comm in open_:
            await comm.disconnect()


async def test_spectators_per_match(
    alice: Any, bob: Any, carol: Any, dave: Any, outsider: Any, settings: Any
) -> None:
    settings.SPECTATORS_PER_MATCH = 2
    match = await database_sync_to_async(lambda: accept_invite(create_invite(alice).code, bob))()
    watchers = [await match_socket(await login(u), match.pk) for u in (carol, dave)]
    try:
        third = await socket(await login(outsider), f"/ws/matches/{match.pk}/")
        assert await _close_code(third) == 4431
        await third.disconnect()
        # The players are not spectators: they still connect.
        players = [await match_socket(await login(u), match.pk) for u in (alice, bob)]
        for p in players:
            await p.comm.disconnect()
    finally:
        for w in watchers:
            await w.comm.disconnect()
