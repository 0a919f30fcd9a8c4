"""Where a player's move spends its time in this process, stage by stage.

A frame is marked where its consumer reads it and at each step after, on the
thread or loop that takes it there:

============  =====================================================================
``taken``     read → a match thread starts on it (the hand-off, and the wait for a
              free thread)
``locked``    → its match row is read under lock (BEGIN, the SELECT, the wait for
              another holder of the lock)
``committed`` → the COMMIT is answered (the rules, the writes)
``built``     → every audience's view is built (on the thread; with PostgreSQL's
              pipeline while the COMMIT is on its way, and then this is ~0)
``handed``    → the event loop starts the push (the hop back to the loop)
``published`` → the channel layer took the frames (on Redis, a round trip)
============  =====================================================================

The durations go to :data:`_listeners` (``matches.clock.metrics``:
``sb_move_stage_seconds{stage}``). A throwaway timer of these stages found the
channel layer's lock (README, "The noon of 2026-12-05"); now it is always there.

The marks travel in a context variable from the consumer to the match thread
(``asgiref`` runs the thread in a copy of the caller's context) and then on the
change itself to the loop. A change that no frame made (the sweepers') has none.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable

STAGES = ("taken", "locked", "committed", "built", "handed", "published")

_marks: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar(
    "move_marks", default=None
)
_listeners: list[Callable[[str, float], None]] = []


def begin() -> None:
    """A player's frame was just read (its consumer)."""
    _marks.set({"received": time.perf_counter()})


def end() -> None:
    """The frame is handled (its consumer): what this context does next is not its work.
    A change already made keeps the marks it carries."""
    _marks.set(None)


def current() -> dict[str, float] | None:
    """This frame's marks, if a frame is being handled here."""
    return _marks.get()


def mark(name: str, marks: dict[str, float] | None = None) -> None:
    """The frame (``marks``, else this context's) reached stage ``name`` now."""
    if marks is None:
        marks = _marks.get()
    if marks is not None and name not in marks:
        marks[name] = time.perf_counter()


def finish(marks: dict[str, float] | None) -> None:
    """The frame's push is done: each stage's duration to the listeners, once."""
    if marks is None or "done" in marks:
        return
    marks["done"] = 0.0
    for name, seconds in durations(marks).items():
        for f in _listeners:
            f(name, max(0.0, seconds))


def durations(marks: dict[str, float]) -> dict[str, float]:
    """Each stage's duration in s (tests, tools)."""
    out: dict[str, float] = {}
    previous = marks.get("received")
    for name in STAGES:
        at = marks.get(name)
        if at is None:
            continue
        if previous is not None:
            out[name] = at - previous
        previous = at
    return out
