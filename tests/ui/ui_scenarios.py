"""Views for the UI tests, built with the real engine and no database.

A view is ``engine.view_for(state, seat, now)`` plus the ``match`` block that
``matches/play/`` adds (docs/protocol.md, "The view").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import engine

T0 = 1_767_000_000_000  # epoch ms: the views' clocks are absolute
NAMES = ("alice", "bob")


def match_block(
    seat: int | None,
    *,
    version: int = 7,
    status: str = "live",
    kind: str = "casual",
    ready: tuple[bool, bool] = (False, False),
    deadline: int | None = None,
    result: dict[str, Any] | None = None,
    now: int = T0,
    void_reason: str = "",
    rematch: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": 12,
        "kind": kind,
        "status": status,
        "names": list(NAMES),
        "you": seat,
        "ready": list(ready),
        "ready_deadline": deadline,
        "server_now": now,
        "result": result,
        "version": version,
        "void_reason": void_reason,
        "rematch": rematch,
    }


def rematch_block(
    status: str = "none",
    offered_by: int | None = None,
    *,
    new_match: int | None = None,
    expires_at: int | None = None,
) -> dict[str, Any]:
    """``view["match"]["rematch"]`` as matches/lobby/rematch.py builds it once the match is over."""
    if status == "open" and expires_at is None:
        expires_at = T0 + 120_000
    return {
        "status": status,
        "offered_by": offered_by,
        "declined": status == "declined",
        "new_match": new_match,
        "expires_at": expires_at if status == "open" else None,
    }


def seat_view(state: engine.MatchState, seat: int | None, now: int, **kw: Any) -> dict[str, Any]:
    """What ``seat`` sees at ``now`` (``None``: a spectator, as in a same-device hand-off)."""
    v = engine.view_for(state, seat, now)
    if kw.get("status") is None and state.phase == engine.MATCH_OVER:
        kw.setdefault("status", "finished")
        kw.setdefault("result", {"winner": state.winner, "end": state.end})
    v["match"] = match_block(seat, now=now, **kw)
    return v


def waiting_view(seat: int = 0, **kw: Any) -> dict[str, Any]:
    """Before both pressed Start there is no engine state yet."""
    kw.setdefault("deadline", T0 + 60_000)
    return {"seat": seat, "phase": None, "match": match_block(seat, status="waiting", **kw)}


def random_match(
    seed: int, *, jockey: int | None = None, handoff: bool = False, steps: int = 3000
) -> Iterator[tuple[engine.MatchState, int]]:
    """Every state of one seeded random match, with the next hands dealt as the server does."""
    rng = random.Random(seed)
    now = T0
    s = engine.new_match(engine.Deal.shuffled(rng), now_ms=now, jockey=jockey, handoff=handoff)
    yield s, now
    for _ in range(steps):
        acts = engine.legal_actions(s)
        if not acts:
            if s.phase != engine.HAND_OVER:
                return
            now += 1000
            s, _ = engine.next_hand(s, engine.Deal.shuffled(rng), now)
            yield s, now
            continue
        now += rng.randint(100, 2500)
        s, _ = engine.apply(s, engine.forced_action(s) or rng.choice(acts), now)
        yield s, now


def first_state(
    pred: Callable[[engine.MatchState], bool], seeds: range = range(400), **kw: Any
) -> tuple[engine.MatchState, int]:
    """The first state of the first seeded match that satisfies ``pred``."""
    for seed in seeds:
        for s, now in random_match(seed, **kw):
            if pred(s):
                return s, now
    raise AssertionError("no seeded match reaches that state")


def layout_dicts(placements: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """A view's ``layout`` from ``(tile, at)`` pairs, placed with the engine's Layout."""
    from engine.layout import Layout

    lay = Layout()
    for tile, at in placements:
        lay.place(tuple(tile), None if at is None else (tuple(at[0]), at[1]))
    return [
        {
            "tile": list(p.tile),
            "at": None if p.at is None else {"tile": list(p.at[0]), "side": p.at[1]},
            "conn": p.conn,
            "player": p.player,
        }
        for p in lay.placed
    ], lay
