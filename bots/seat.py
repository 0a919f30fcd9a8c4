"""The computer player's input boundary: plain JSON views and the events it remembers.

The player is given what the match socket gives a seat and nothing else.
``plain`` is the gate every input passes: it round-trips the data through
JSON, so an ``engine.MatchState`` (or anything holding one) is refused rather
than read, and the player works on its own copy.
"""

from __future__ import annotations

import json
from typing import Any

View = dict[str, Any]
Event = dict[str, Any]

# What the player reads from a view (engine.view_for / docs/protocol.md).
_VIEW_KEYS = (
    "phase",
    "seat",
    "hand_no",
    "hand",
    "hand_sizes",
    "talon",
    "balances",
    "layout",
    "playable",
    "must_place",
    "my_turn",
    "forced",
    "auction",
    "events",
)


class NotAView(TypeError):
    """The input is not a seat's view as plain JSON data (dicts, lists, numbers, strings)."""


def plain(data: Any, what: str = "view") -> Any:
    """A JSON round trip of ``data``; ``NotAView`` if it is not plain JSON data."""
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise NotAView(
            f"the {what} must be plain JSON data, not {type(data).__name__}: {e}"
        ) from None


def seat_view(view: Any) -> View:
    """``view`` as a plain copy, checked to be one seat's view (not a spectator's)."""
    v = plain(view)
    if not isinstance(v, dict):
        raise NotAView("a view is a JSON object")
    missing = [k for k in _VIEW_KEYS if k not in v]
    if missing:
        raise NotAView(f"not a seat's view: no {', '.join(missing)}")
    if v["seat"] not in (0, 1):
        raise NotAView("not a seat's view: seat is 0 or 1")
    return v


class Memory:
    """One seat's events of the current hand, gathered frame by frame.

    A view carries only recent events (and a pushed frame may carry only the
    new ones), so feed ``update`` every view the seat receives; ``events`` is
    then this hand's events in ``seq`` order. A new ``hand_no`` starts afresh.
    A seat that joins mid-hand, or misses frames, has a gap in ``seq``: the
    player notices and infers nothing from events it cannot place in order.

    >>> m = Memory()
    >>> m.update({"seat": 0, "hand_no": 0, "events": [
    ...     {"seq": 2, "type": "place", "hand": 0, "player": 1},
    ...     {"seq": 1, "type": "hand_start", "hand": 0, "player": None}]})
    >>> [e["seq"] for e in m.events]
    [1, 2]
    >>> m.update({"seat": 0, "hand_no": 1, "events": [{"seq": 3, "type": "hand_start",
    ...     "hand": 1, "player": None}]})
    >>> [e["seq"] for e in m.events]
    [3]
    """

    def __init__(self) -> None:
        self.seat: int | None = None
        self.hand_no: int | None = None
        self._events: dict[int, Event] = {}

    def update(self, view: Any) -> None:
        """Remember the events of ``view`` (a view of this memory's seat, as plain JSON)."""
        self.remember(plain(view))

    def remember(self, v: View) -> None:
        """``update`` for a view already made plain (``plain`` or ``seat_view``)."""
        if self.seat is None:
            self.seat = v["seat"]
        elif v["seat"] != self.seat:
            raise ValueError(f"this memory is seat {self.seat}'s, not seat {v['seat']}'s")
        if v["hand_no"] != self.hand_no:
            self.hand_no = v["hand_no"]
            self._events = {}
        for ev in v["events"]:
            if ev["hand"] == self.hand_no:
                self._events[ev["seq"]] = ev

    @property
    def events(self) -> list[Event]:
        return [self._events[k] for k in sorted(self._events)]


def hand_events(view: View, history: list[Event]) -> list[Event]:
    """This hand's events from ``history`` (plain) and the view, once each, in ``seq`` order."""
    merged: dict[int, Event] = {}
    for ev in [*history, *view["events"]]:
        if not isinstance(ev, dict):
            raise NotAView("an event is a JSON object")
        if ev.get("hand") == view["hand_no"]:
            merged[ev["seq"]] = ev
    return [merged[k] for k in sorted(merged)]
