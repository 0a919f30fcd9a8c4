"""The seat whose clock runs gets a change's frame out first, before the mover's page is drawn.

Both seats of a match usually have their sockets in the same web process (the proxy's
match affinity), and each socket takes its frame from its own queue when its consumer's
task comes round. The mover's socket, still finishing the frame that made the change,
found its frame at once and drew its page (a millisecond of the loop) while the
opponent, whose clock runs, waited; and Daphne's transport (Twisted) writes a frame out
on the loop's next turn, so even a frame handed over first left after that page.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from wsclient import login_headers, open_socket

import engine
from config.asgi import application
from matches.models import Match
from matches.realtime import broadcast
from matches.realtime.match_consumer import MatchConsumer
from matches.ui import fragments
from tests.support import frame_for, live_casual

pytestmark = pytest.mark.django_db(transaction=True)


def _hand_over_action(match_id: int) -> tuple[int, dict[str, Any]]:
    """The seat to act, and a frame of its after which the other seat is to act."""
    m = Match.objects.get(pk=match_id)
    state = engine.from_dict(m.state)
    for action in engine.legal_actions(state):
        after, _ = engine.apply(state, action, 0)
        if after.to_act == 1 - action.player:
            return action.player, frame_for(action, m.version)
    raise AssertionError("no action hands the turn over")


class Wire:
    """Stands in for Daphne's transport: a frame ``send`` hands over is written out on
    the loop's next turn, when its socket is ready for writing (Twisted's ``startWriting``
    is the loop's ``add_writer``)."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self.note = note
        self.ours, self.theirs = socket.socketpair()

    def hand_over(self, what: str) -> None:
        loop = asyncio.get_running_loop()

        def written() -> None:
            loop.remove_writer(self.ours)
            self.note(what)

        loop.add_writer(self.ours, written)

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


async def test_the_opponent_of_a_page_gets_its_frame_out_before_the_movers_page_is_drawn(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    match = await database_sync_to_async(live_casual)(alice, bob)
    mover_seat, frame = await database_sync_to_async(_hand_over_action)(match.pk)
    users = (alice, bob)
    mover, opponent = users[mover_seat], users[1 - mover_seat]

    log: list[str] = []
    both_logged = asyncio.Event()

    def note(what: str) -> None:
        log.append(what)
        if len(log) >= 2:
            both_logged.set()

    wire = Wire(note)
    moved = asyncio.Event()
    mover_took = asyncio.Event()  # the mover's socket came round to its frame
    send = MatchConsumer.send
    draw = fragments.render_changed

    async def send_on_wire(self: MatchConsumer, *args: Any, **kwargs: Any) -> None:
        await send(self, *args, **kwargs)
        if moved.is_set() and not self.html:
            wire.hand_over(f"the opponent's frame written (to act: {self.seats})")

    def drawn(*args: Any, **kwargs: Any) -> str:
        if moved.is_set():
            note("the mover's page drawn")
        return draw(*args, **kwargs)

    async def taken_late(self: MatchConsumer, event: dict[str, Any]) -> None:
        # The opponent's task comes round to its frame after the mover's, as it did on
        # the services set-up (the mover's task was running already, finishing the frame
        # that made the change): its place in the queue is not enough.
        if moved.is_set():
            if self.html:
                mover_took.set()
            else:
                await asyncio.wait_for(mover_took.wait(), 10)
        await take(self, event)

    take = MatchConsumer.match_frame
    monkeypatch.setattr(MatchConsumer, "match_frame", taken_late)
    monkeypatch.setattr(MatchConsumer, "send", send_on_wire)
    monkeypatch.setattr(fragments, "render_changed", drawn)

    theirs = await open_socket(match.pk, opponent)  # JSON
    headers = await database_sync_to_async(login_headers)(mover)
    url = f"/ws/matches/{match.pk}/?format=html"
    page = WebsocketCommunicator(application, url, headers=headers)
    connected, _ = await page.connect(timeout=10)
    assert connected
    try:
        await page.receive_from(timeout=10)  # the whole page, drawn at connect
        moved.set()
        await page.send_to(text_data=json.dumps(frame))
        state = await theirs.state_at(frame["version"] + 1)
        assert state["view"]["to_act"] == 1 - mover_seat
        html = await page.receive_from(timeout=10)
        assert f'data-version="{frame["version"] + 1}"' in html
        await asyncio.wait_for(both_logged.wait(), 10)
    finally:
        await page.disconnect()
        await theirs.comm.disconnect()
        wire.close()
    assert log == [
        f"the opponent's frame written (to act: {[1 - mover_seat]})",
        "the mover's page drawn",
    ]


async def test_a_socket_waits_for_the_seat_to_act_only_while_it_has_one_here() -> None:
    # The seat to act has no socket in this process: nobody waits.
    alone = broadcast.UrgentFirst("seat1")
    assert alone.part("seat0") == {"after": alone}
    await asyncio.wait_for(alone.wait(), broadcast.URGENT_WAIT_S / 10)

    # It has one: the others wait until it was sent its frame…
    gate = broadcast.UrgentFirst("seat1")
    assert gate.part("seat1") == {"opens": gate}
    order: list[str] = []
    loop = asyncio.get_running_loop()

    def sent_to_the_seat() -> None:
        order.append("the seat to act was sent its frame")
        gate.open()

    # Two turns of the loop after the wait below began (a wait that only yielded once
    # would go on before the seat to act was sent anything).
    loop.call_soon(loop.call_soon, sent_to_the_seat)
    await gate.wait()  # bounded by URGENT_WAIT_S in any case
    order.append("the other socket goes on")
    assert order == ["the seat to act was sent its frame", "the other socket goes on"]

    # …or, if it never takes it (closed meanwhile), for URGENT_WAIT_S at most.
    stuck = broadcast.UrgentFirst("seat0")
    stuck.part("seat0")
    began = time.monotonic()
    await asyncio.wait_for(stuck.wait(), 1)
    assert broadcast.URGENT_WAIT_S * 0.9 <= time.monotonic() - began < 1

    # A change with no seat to act (the match is over) orders nobody.
    assert broadcast.UrgentFirst(None).part("seat0") == {}
