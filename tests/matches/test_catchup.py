"""A socket a push never reached is brought up to date (matches/realtime/catchup.py).

The push of a committed change is lost (its process killed between the commit
and the push, say): both seats' sockets show the version before. The next pass
reads the versions; the one after sends each socket still behind the current
view. A socket that is up to date is sent nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from matchplay import frame_for, new_casual
from wsclient import db_state, open_socket

import engine
from matches.clock import metrics
from matches.play import store, timing
from matches.play.act import act
from matches.realtime import catchup

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_seat_a_lost_push_left_behind_is_sent_the_current_view(
    alice: Any, bob: Any, carol: Any, dave: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DEAL_SEED = 4
    match = await database_sync_to_async(new_casual)(alice, bob)
    other = await database_sync_to_async(new_casual)(carol, dave)
    a = await open_socket(match.pk, alice)
    b = await open_socket(match.pk, bob)
    c = await open_socket(other.pk, carol)
    try:
        await a.send({"op": "start", "version": 0})
        await b.state_at(1)
        await b.send({"op": "start", "version": 1})
        await a.state_at(2)
        await b.state_at(2)
        await catchup.pass_once()  # everyone up to date: the versions are noted
        before = metrics.caught_up._value.get()

        # A move commits, and its push is lost (its process died after the commit).
        def move_unpushed() -> int:
            _, raw = db_state(match.pk)
            action = engine.legal_actions(engine.from_dict(raw))[0]
            mover = alice if action.player == 0 else bob
            with monkeypatch.context() as m:
                m.setattr(store, "publish", lambda change: None)
                assert act(match.pk, mover, frame_for(action, 2), timing.now_ms()).change
            return db_state(match.pk)[0]

        version = await database_sync_to_async(move_unpushed)()
        assert version == 3
        # The first pass after it only reads the new version: a push may be on its way.
        assert await catchup.pass_once() == 0
        assert await a.comm.receive_nothing(timeout=0.2)
        # One interval later it has not come: both seats are sent the current view.
        assert await catchup.pass_once() == 2
        for sock in (a, b):
            frame = await asyncio.wait_for(sock.state_at(3), timeout=5)
            assert frame["version"] == 3
        assert metrics.caught_up._value.get() - before == 2
        # Up to date now, like the other match's socket: nothing more is sent.
        assert await catchup.pass_once() == 0
        assert await c.comm.receive_nothing(timeout=0.2)
    finally:
        for sock in (a, b, c):
            await sock.comm.disconnect()
    # Closed sockets are not watched any more.
    assert await catchup.pass_once() == 0


async def test_a_socket_that_cannot_be_sent_to_is_not_tried_again(
    alice: Any, bob: Any, settings: Any
) -> None:
    """Closed under the consumer (its disconnect never ran): one failed try, then it is
    not watched any more, rather than a failure every pass."""

    class Closed:
        accepted = True
        sent_version = 0
        tries = 0

        def __init__(self, match_id: int) -> None:
            self.match_id = match_id

        async def catch_up(self) -> None:
            self.tries += 1
            raise ConnectionError("Attempt to send on a closed protocol")

    match = await database_sync_to_async(new_casual)(alice, bob)
    await database_sync_to_async(
        lambda: act(match.pk, alice, {"op": "start", "version": 0}, timing.now_ms())
    )()
    gone = Closed(match.pk)
    catchup.track(gone)
    try:
        assert await catchup.pass_once() == 0  # version 1 read
        assert await catchup.pass_once() == 1 and gone.tries == 1  # behind: tried, failed
        assert await catchup.pass_once() == 0 and gone.tries == 1  # not tried again
    finally:
        catchup.untrack(gone)


async def test_sockets_behind_are_brought_up_to_date_together_not_one_after_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a reconnect wave dozens of sockets are behind at once, and each reads its view
    on a match thread: the last must not wait for all the others in turn."""
    n = 3
    started: list[int] = []
    done: list[int] = []
    everyone = asyncio.Event()

    class Behind:
        accepted = True
        sent_version = 1

        def __init__(self, match_id: int) -> None:
            self.match_id = match_id

        async def catch_up(self) -> None:
            started.append(self.match_id)
            if len(started) == n:
                everyone.set()
            await asyncio.wait_for(everyone.wait(), timeout=2)  # all under way at once
            done.append(self.match_id)

    monkeypatch.setattr(catchup, "_versions", lambda ids: dict.fromkeys(ids, 2))
    monkeypatch.setattr(catchup, "_read", {})
    sockets = [Behind(i) for i in range(1, n + 1)]
    for s in sockets:
        catchup.track(s)
    try:
        assert await catchup.pass_once() == 0  # the versions are noted
        assert await catchup.pass_once() == n
        assert sorted(done) == [1, 2, 3]
    finally:
        for s in sockets:
            catchup.untrack(s)
