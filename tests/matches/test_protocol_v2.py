"""Protocol version 2: the state frame as a delta.

matches/realtime/protocol_v2.py, docs/protocol.md.

Over whole seeded matches, what a version-2 client rebuilds from its frames is
exactly the version-1 view of every push, for every audience, and a version-2
frame holds nothing that the same audience's version-1 frame does not.
"""

from __future__ import annotations

import json
import random
import re
import statistics
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from matchplay import Table, cautious_random, drive, new_casual
from wsclient import db_state, login_headers, open_socket

import engine
from config.asgi import application
from matches.play import timing
from matches.play.act import Outcome
from matches.play.audience import Change
from matches.realtime import protocol_v2
from tests.support import frame_for

pytestmark = pytest.mark.django_db(transaction=True)

AUDIENCES = ("seat0", "seat1", "watch")


class Recorded(Table):
    """A table that keeps every change the services pushed."""

    changes: list[Change]

    def send(self, seat: int, frame: Any, t: int) -> Outcome:
        out = super().send(seat, frame, t)
        if out.change is not None:
            self.changes.append(out.change)
        return out


def _tiles(text: str) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in re.findall(r"\[(\d),(\d)\]", text)}


@pytest.mark.parametrize("seed", [11])
def test_a_v2_client_rebuilds_every_v1_view_of_a_whole_match(
    alice: Any, bob: Any, settings: Any, seed: int
) -> None:
    settings.DEAL_SEED = seed
    table = Recorded(new_casual(alice, bob), [alice, bob])
    table.changes = []
    t = timing.now_ms()
    table.start(t)
    drive(table, cautious_random, random.Random(seed), t + 1_000)
    assert table.state is not None and table.state.phase == engine.MATCH_OVER
    assert len(table.changes) > 20  # several hands
    for audience in AUDIENCES:
        encoder = protocol_v2.DeltaEncoder()
        held: dict[str, Any] | None = None
        v1_sizes, v2_sizes = [], []
        for i, change in enumerate(table.changes):
            v1_text = change.frame(audience)
            v2_text = encoder.frame(change.view(audience), whole=i == 0)
            frame = json.loads(v2_text)
            assert frame["type"] == "state" and frame["version"] == change.version
            held = protocol_v2.apply(held, frame["view"])
            assert held == json.loads(v1_text)["view"], (audience, i)
            # Nothing the version-1 frame would not show: no other tile, no hidden hand.
            assert _tiles(v2_text) <= _tiles(v1_text), (audience, i)
            if audience == "watch":
                assert '"hand":[' not in v2_text and "hand" not in held  # no seat's tiles
            v1_sizes.append(len(v1_text.encode()))
            v2_sizes.append(len(v2_text.encode()))
        assert statistics.median(v2_sizes) <= 2048, audience  # a typical frame ≤ 2 KB
        assert statistics.median(v2_sizes) < 0.8 * statistics.median(v1_sizes), audience


def test_a_delta_without_what_it_applies_to_is_refused() -> None:
    with pytest.raises(ValueError, match="sync"):
        protocol_v2.apply(None, {"layout_delta": {"keep": 0, "add": []}, "match": {}})
    with pytest.raises(ValueError, match="sync"):
        protocol_v2.apply({"layout": []}, {"match_delta": {"version": 3}})


async def test_over_the_socket_v2_is_opt_in_and_v1_is_unchanged(
    alice: Any, bob: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 4
    match = await database_sync_to_async(new_casual)(alice, bob)
    a = await open_socket(match.pk, alice)  # version 1, as existing bots
    headers = await database_sync_to_async(login_headers)(bob)
    b = WebsocketCommunicator(application, f"/ws/matches/{match.pk}/?v=2", headers=headers)
    assert (await b.connect(timeout=10))[0]
    try:
        first = await b.receive_json_from(timeout=10)
        assert "layout" in first["view"] or first["view"]["phase"] is None
        assert "match" in first["view"] and "match_delta" not in first["view"]
        held = first["view"]
        await a.send({"op": "start", "version": 0})
        await b.send_json_to({"op": "start", "version": 1})
        fa = await a.state_at(2)
        while held["match"]["version"] < 2:
            frame = await b.receive_json_from(timeout=10)
            held = protocol_v2.apply(held, frame["view"])
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        if action.player == 0:
            await a.send(frame_for(action, 2))
        else:
            await b.send_json_to(frame_for(action, 2))
        v1 = (await a.state_at(3))["view"]
        assert "layout" in v1 and "match" in v1 and "layout_delta" not in v1  # v1 unchanged
        frame = await b.receive_json_from(timeout=10)
        assert "layout_delta" in frame["view"] and "match_delta" in frame["view"]
        assert "names" not in frame["view"]["match_delta"]  # unchanged: not repeated
        held = protocol_v2.apply(held, frame["view"])
        assert held["layout"] == v1["layout"] and held["match"]["names"] == ["alice", "bob"]
        assert held["match"]["version"] == 3 and fa["version"] == 2
        # sync answers a whole view, in version 2 too.
        await b.send_json_to({"op": "sync", "version": 3})
        whole = await b.receive_json_from(timeout=10)
        assert "layout" in whole["view"] and "match" in whole["view"]
    finally:
        await a.comm.disconnect()
        await b.disconnect()


async def test_one_process_encodes_a_version_1_frame_only_for_a_socket_that_reads_it(
    alice: Any, bob: Any, settings: Any, monkeypatch: Any
) -> None:
    """On the embedded default (one process, in-memory layer) a change is handed to the
    sockets as a view; its version-1 text is made only if a version-1 socket asks, once
    for its audience (8 % of the process's CPU went to texts nobody read)."""
    from matches.realtime.layers import InMemoryLayer

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "matches.realtime.layers.InMemoryLayer"}}
    settings.DEAL_SEED = 4
    encoded: list[str] = []
    frame = Change.frame

    def counting(self: Change, audience: str) -> str:
        encoded.append(audience)
        return frame(self, audience)

    monkeypatch.setattr(Change, "frame", counting)
    match = await database_sync_to_async(new_casual)(alice, bob)
    sockets = {}
    for name, user in (("alice", alice), ("bob", bob)):
        headers = await database_sync_to_async(login_headers)(user)
        comm = WebsocketCommunicator(application, f"/ws/matches/{match.pk}/?v=2", headers=headers)
        assert (await comm.connect(timeout=10))[0]
        assert (await comm.receive_json_from(timeout=10))["version"] == 0
        sockets[name] = comm
    from channels.layers import get_channel_layer

    assert isinstance(get_channel_layer(), InMemoryLayer)
    try:
        await sockets["alice"].send_json_to({"op": "start", "version": 0})
        await sockets["bob"].send_json_to({"op": "start", "version": 0})
        for comm in sockets.values():  # both see the match start, as deltas
            version = 0
            while version < 2:
                version = (await comm.receive_json_from(timeout=10))["version"]
        assert encoded == []  # nobody reads version 1: no text was made
        # A version-1 socket (a spectator's) on the same match: its audience's text is
        # made for it, once per change, and nobody else's.
        watcher = await open_socket(match.pk, alice)  # alice's second socket: version 1
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        mover = sockets["alice" if action.player == 0 else "bob"]
        await mover.send_json_to(frame_for(action, 2))
        assert (await watcher.state_at(3))["version"] == 3
        assert encoded == ["seat0"]
        await watcher.comm.disconnect()
    finally:
        for comm in sockets.values():
            await comm.disconnect()
