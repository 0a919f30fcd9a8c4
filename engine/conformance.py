"""Replay conformance cases through the engine (``../shared/conformance/README.md``).

    python -m engine.conformance CASE.json [CASE.json ...]

Prints one line ``{"id": ..., "results": [SNAPSHOT, ...]}`` per well-formed
case. A malformed case prints nothing, is named on stderr, and makes the exit
status non-zero; the other cases still run. Expectations are not compared here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import IllegalAction
from .layout import ALL_SIDES
from .match import Action, ClockConfig, Deal, MatchState, apply, expire, new_match, next_hand
from .tiles import Tile, normalize
from .view import snapshot

PLAYER_DOS = ("place", "draw", "pass", "decline", "bid", "accept", "resign", "reveal")
SYSTEM_DOS = ("next_hand", "tick")


class Malformed(Exception):
    """The case itself is broken (not an illegal move inside a good case)."""


@dataclass(frozen=True, slots=True)
class Step:
    do: str
    t: int
    action: Action | None


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    balances: tuple[int, int]
    clock: ClockConfig | None
    jockey: int | None
    handoff: bool
    deals: tuple[Deal, ...]
    steps: tuple[Step, ...]


def _int(x: Any, what: str) -> int:
    if type(x) is not int:
        raise Malformed(f"{what} must be an integer")
    return x


def _tile(x: Any, what: str) -> Tile:
    if not isinstance(x, list) or len(x) != 2:
        raise Malformed(f"{what} must be a tile [a, b]")
    try:
        return normalize(x)
    except ValueError as e:
        raise Malformed(f"{what}: {e}") from None


def _tiles(x: Any, what: str) -> tuple[Tile, ...]:
    if not isinstance(x, list):
        raise Malformed(f"{what} must be a list of tiles")
    return tuple(_tile(t, what) for t in x)


def _deal(x: Any, k: int) -> Deal:
    if not isinstance(x, dict) or not isinstance(x.get("hands"), list) or len(x["hands"]) != 2:
        raise Malformed(f"deals[{k}] needs two hands")
    deal = Deal(
        (_tiles(x["hands"][0], f"deals[{k}]"), _tiles(x["hands"][1], f"deals[{k}]")),
        _tiles(x.get("talon"), f"deals[{k}].talon"),
    )
    try:
        deal.validate()
    except ValueError as e:
        raise Malformed(f"deals[{k}]: {e}") from None
    return deal


def parse_case(raw: Any) -> Case:
    """Validate a case's JSON; ``Malformed`` says what is wrong."""
    if not isinstance(raw, dict):
        raise Malformed("a case is a JSON object")
    cid = raw.get("id")
    if not isinstance(cid, str):
        raise Malformed("id must be a string")
    setup = raw.get("setup")
    if not isinstance(setup, dict):
        raise Malformed("setup must be an object")
    # null is taken as absent, as it is for clock and jockey: nothing is lost (README).
    bal = setup.get("balances")
    if bal is None:
        bal = [150, 150]
    if not isinstance(bal, list) or len(bal) != 2:
        raise Malformed("balances must be two integers")
    b0, b1 = _int(bal[0], "balance"), _int(bal[1], "balance")
    if b0 <= 0 or b1 <= 0:
        raise Malformed("balances must be positive")
    c = setup.get("clock")
    clock = None
    if c is not None:
        if not isinstance(c, dict):
            raise Malformed("clock must be an object")
        main, delay = _int(c.get("main_ms"), "main_ms"), _int(c.get("delay_ms"), "delay_ms")
        if main < 0 or delay < 0:
            raise Malformed("clock times must not be negative")
        clock = ClockConfig(main, delay)
    jockey = setup.get("jockey")
    if jockey is not None and (type(jockey) is not int or jockey not in (0, 1)):
        raise Malformed("jockey must be 0, 1 or null")
    handoff = setup.get("handoff")
    if handoff is None:
        handoff = False
    if type(handoff) is not bool:
        raise Malformed("handoff must be a boolean")
    deals = setup.get("deals")
    if not isinstance(deals, list) or not deals:
        raise Malformed("deals must be a non-empty list (hand 0 needs a deal)")
    parsed_deals = tuple(_deal(d, k) for k, d in enumerate(deals))
    actions = raw.get("actions")
    if not isinstance(actions, list):
        raise Malformed("actions must be a list")
    return Case(
        cid,
        (b0, b1),
        clock,
        jockey,
        handoff,
        parsed_deals,
        tuple(_steps(actions, clock is not None)),
    )


def _steps(actions: list[Any], timed: bool) -> Iterable[Step]:
    last = 0
    for i, a in enumerate(actions):
        what = f"actions[{i}]"
        if not isinstance(a, dict):
            raise Malformed(f"{what} must be an object")
        do = a.get("do")
        if not isinstance(do, str) or do not in PLAYER_DOS + SYSTEM_DOS:
            raise Malformed(f"{what}: unknown do {do!r}")
        if timed:
            t = _int(a.get("t"), f"{what}.t")
            if t < 0 or t < last:
                raise Malformed(f"{what}.t must be non-negative and non-decreasing")
            last = t
        else:
            t = last
        if do in SYSTEM_DOS:
            yield Step(do, t, None)
            continue
        player = a.get("player")
        if type(player) is not int or player not in (0, 1):
            raise Malformed(f"{what}.player must be 0 or 1")
        tile = at = amount = None
        if do == "place":
            tile = _tile(a.get("tile"), f"{what}.tile")
            raw_at = a.get("at")
            if raw_at is not None:
                if not isinstance(raw_at, dict) or not isinstance(raw_at.get("side"), str):
                    raise Malformed(f"{what}.at must be {{tile, side}}")
                at = (_tile(raw_at.get("tile"), f"{what}.at.tile"), raw_at["side"])
        elif do == "bid":
            amount = _int(a.get("amount"), f"{what}.amount")
        yield Step(do, t, Action(do, player, tile=tile, at=at, amount=amount))


def run_case(case: Case) -> list[dict[str, Any]]:
    """Replay a parsed case; one snapshot per action. ``Malformed`` if a hand lacks its deal."""
    state: MatchState = new_match(
        case.deals[0],
        now_ms=0,
        balances=case.balances,
        clock=case.clock,
        jockey=case.jockey,
        handoff=case.handoff,
    )
    next_deal = 1
    results: list[dict[str, Any]] = []
    for step in case.steps:
        ok, error = True, None
        expired, events = expire(state, step.t)
        if events:
            state = expired
            if step.do != "tick":
                ok, error = False, "timeout"
        elif step.do == "next_hand":
            if state.phase == "hand_over" and next_deal >= len(case.deals):
                raise Malformed(f"no deal for hand {next_deal}")
            try:
                state, _ = next_hand(state, case.deals[min(next_deal, len(case.deals) - 1)], step.t)
                next_deal += 1
            except IllegalAction as e:
                ok, error = False, e.code
        elif step.action is not None:
            action = step.action
            if action.at is not None and action.at[1] not in ALL_SIDES:
                ok, error = False, "bad_position"
            else:
                try:
                    state, _ = apply(state, action, step.t)
                except IllegalAction as e:
                    ok, error = False, e.code
        snap = snapshot(state, step.t)
        results.append({"ok": ok, "error": error, **snap})
    return results


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m engine.conformance CASE.json [CASE.json ...]", file=sys.stderr)
        return 2
    status = 0
    for path in argv:
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
            case = parse_case(raw)
            results = run_case(case)
        except (OSError, ValueError, Malformed) as e:
            print(f"{path}: malformed case: {e}", file=sys.stderr)
            status = 1
            continue
        print(json.dumps({"id": case.id, "results": results}, separators=(",", ":")))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
