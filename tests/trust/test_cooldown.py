"""Ranked no-shows and dodges cost a queue cooldown (issue 16, "Ranked dodging").

A player who leaves a ranked match before 開始 (a resign then is an abort), or
never presses 開始 in its window, is charged; the second charge within 24 h
keeps them out of the ranked queue for 5 minutes, the third for 15, and so on.
The lobby shows until when; a join meanwhile is refused with ``cooldown`` and
that end time, and changes nothing. Charges older than 24 h are forgotten.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async
from django.utils import timezone

from matches.clock.deadlines import check_match
from matches.models import Match, NoShow, QueueEntry
from matches.play import timing
from matches.play.act import act
from tests.support import START, connect_lobby
from tests.trust.client import Browser

pytestmark = pytest.mark.django_db(transaction=True)
HTMX = {"HTTP_HX_REQUEST": "true"}


def _ms(dt: Any) -> int:
    return int(dt.timestamp() * 1000)


def _paired(a: Browser, b: Browser) -> Match:
    a.http.post("/queue/join/")
    response = b.http.post("/queue/join/")
    assert response.status_code == 302 and response["Location"].startswith("/matches/")
    return Match.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))


def _dodge(dodger: Browser, other: Browser) -> Match:
    """A ranked match from the queue that ``dodger`` leaves before 開始 (as its socket would)."""
    m = _paired(other, dodger)
    act(m.pk, dodger.user, {"op": "resign", "version": 0}, timing.now_ms())
    m.refresh_from_db()
    assert m.status == Match.Status.ABORTED
    return m


def _join_refused(browser: Browser) -> str:
    card = browser.http.post("/queue/join/", **HTMX).content.decode()
    assert not QueueEntry.objects.filter(user=browser.user).exists()
    return card


def _joins(browser: Browser) -> bool:
    browser.http.post("/queue/join/", **HTMX)
    joined = QueueEntry.objects.filter(user=browser.user).exists()
    browser.http.post("/queue/leave/", **HTMX)
    return joined


def test_dodges_escalate_and_expire(alice: Any, bob: Any, settings: Any) -> None:
    settings.QUEUE_JOINS_PER_MINUTE = 100  # this test joins often; that budget is not its subject
    a, b = Browser(alice), Browser(bob)
    with time_machine.travel(START, tick=False) as clock:
        _dodge(b, a)
        # A first dodge is a warning only; the other seat is never charged.
        assert NoShow.objects.filter(user=bob).count() == 1
        assert not NoShow.objects.filter(user=alice).exists()
        assert _joins(b) and _joins(a)

        clock.shift(timedelta(minutes=1))
        _dodge(b, a)
        until = START + timedelta(minutes=1) + timedelta(minutes=5)
        card = _join_refused(b)
        assert f'data-until="{_ms(until)}"' in card
        assert timezone.localtime(until).strftime("%H:%M:%S") in card
        lobby = b.http.get("/").content.decode()
        assert 'data-testid="queue-cooldown"' in lobby and f'data-until="{_ms(until)}"' in lobby
        assert _joins(a)  # alice waits for nobody

        clock.shift(timedelta(minutes=5) - timedelta(seconds=1))
        _join_refused(b)  # a second before its end: still out
        clock.shift(timedelta(seconds=1))
        assert _joins(b)

        _dodge(b, a)  # the third charge within 24 h: 15 minutes
        clock.shift(timedelta(minutes=14, seconds=59))
        _join_refused(b)
        clock.shift(timedelta(seconds=1))
        assert _joins(b)

        # 24 h after them, the three charges are forgotten: the next dodge is a warning again.
        clock.shift(timedelta(hours=24))
        _dodge(b, a)
        assert _joins(b)


def test_never_pressing_start_charges_only_the_absent_seat(alice: Any, bob: Any) -> None:
    a, b = Browser(alice), Browser(bob)
    with time_machine.travel(START, tick=False) as clock:
        for _ in range(2):
            m = _paired(a, b)
            act(m.pk, alice, {"op": "start", "version": 0}, timing.now_ms())
            m.refresh_from_db()
            # The start window closes; the sweeper aborts the match.
            assert check_match(m.pk, m.version, now=m.ready_deadline_ms + 1)
            m.refresh_from_db()
            assert m.status == Match.Status.ABORTED
            clock.shift(timedelta(minutes=1))
        assert NoShow.objects.filter(user=bob).count() == 2
        assert not NoShow.objects.filter(user=alice).exists()
        _join_refused(b)
        assert _joins(a)


async def test_the_lobby_socket_answers_cooldown_with_its_end(alice: Any, bob: Any) -> None:
    a, b = await database_sync_to_async(Browser)(alice), await database_sync_to_async(Browser)(bob)
    for _ in range(2):
        await database_sync_to_async(_dodge)(b, a)
    lobby = await connect_lobby(bob)
    try:
        first = await lobby.receive_json_from(timeout=5)
        assert first["type"] == "queue" and first["cooldown_until"] is not None
        await lobby.send_json_to({"op": "join"})
        refused = await lobby.receive_json_from(timeout=5)
        assert refused["type"] == "error" and refused["code"] == "cooldown"
        assert refused["retry_at"] == first["cooldown_until"] and refused["message"]
        assert not await database_sync_to_async(QueueEntry.objects.exists)()
    finally:
        await lobby.disconnect()
