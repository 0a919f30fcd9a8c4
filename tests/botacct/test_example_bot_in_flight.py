"""examples/bot.py waits for its action's answer when only time was given back meanwhile.

After our restart the outage is given back to every match as a change of its own (a
frame whose events are all ``credit``), often while a bot's move is on its way. The
example bot took that frame's new version for a new decision and sent a second move:
the first was applied (docs/protocol.md: a version behind only by credits still is)
and the second refused as ``stale``. A socket stands in for the server here: what the
bot sends is kept; the frames are the protocol's (docs/protocol.md, the state frame).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("example_bot", ROOT / "examples" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Player:
    """Always the same move: what it decides is not the point here."""

    def observe(self, view: dict[str, Any]) -> dict[str, Any] | None:
        return {"op": "place", "tile": [6, 6], "at": None} if view.get("my_turn") else None


class Socket:
    """Hands the bot ``frames`` one by one, each only once the bot has read the one before."""

    def __init__(self, frames: list[dict[str, Any]]) -> None:
        self.frames = frames
        self.sent: list[dict[str, Any]] = []

    def __aiter__(self) -> Any:
        return self._frames()

    async def _frames(self) -> Any:
        for frame in self.frames:
            yield json.dumps(frame)

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


def _state(version: int, events: list[dict[str, Any]], *, after: int | None, turn: bool) -> Any:
    view = {
        "seat": 0,
        "phase": "play",
        "hand_no": 1,
        "my_turn": turn,
        "events": events,
        "events_after": after,
        "match": {"status": "live", "ready": [True, True]},
    }
    return {"type": "state", "version": version, "view": view}


def _credit(seq: int) -> dict[str, Any]:
    return {"type": "credit", "seq": seq, "ms": 2_000, "player": 0}


OVER = {"type": "state", "version": 99, "view": {"match": {"status": "finished"}}}


def _play(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ws = Socket([*frames, OVER])
    asyncio.run(_example()._play_on(ws, Player(), lambda _: None))
    return ws.sent


def test_a_credit_while_the_move_is_on_its_way_brings_no_second_move() -> None:
    sent = _play(
        [
            _state(10, [], after=None, turn=True),  # the view on connect: its move
            _state(11, [_credit(5)], after=4, turn=True),  # our outage given back
            _state(12, [{"type": "place", "seq": 6, "player": 0}], after=5, turn=False),
        ]
    )
    assert sent == [{"op": "place", "tile": [6, 6], "at": None, "version": 10}]


def test_after_a_refusal_the_bot_decides_again_on_the_credited_view() -> None:
    sent = _play(
        [
            _state(10, [], after=None, turn=True),
            {"type": "error", "code": "stale", "message": "The match moved on"},
            _state(11, [_credit(5)], after=4, turn=True),
        ]
    )
    assert [f["version"] for f in sent] == [10, 11]


def test_a_change_that_moved_something_is_a_new_decision() -> None:
    # The opponent's move (not only time) after ours was answered: the bot acts again.
    sent = _play(
        [
            _state(10, [], after=None, turn=True),
            _state(11, [{"type": "place", "seq": 5, "player": 0}], after=4, turn=False),
            _state(12, [{"type": "place", "seq": 6, "player": 1}], after=5, turn=True),
            _state(13, [_credit(7)], after=6, turn=True),
        ]
    )
    assert [f["version"] for f in sent] == [10, 12]
