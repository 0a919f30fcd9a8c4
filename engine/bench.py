"""How fast the engine is, on one core (standard library only).

    python -m engine.bench [--seed N] [--quick]

Random legal play (forced actions applied, time moving forward) gives the
actions and the mid-game states measured here: applied actions per second
(recorded matches replayed through ``apply``), complete random matches per
second (choosing included), and per mid-game state the dict and JSON text
round trips and ``view_for``. Each figure is the best of a few repeats; the
goals are judged on wall time (``time.perf_counter``), and CPU time
(``time.process_time``) is shown beside it so a busy machine is visible.
The exit status is 0 whenever the benchmark ran; the table says which goals
were met.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from .match import (
    HAND_OVER,
    MATCH_OVER,
    Action,
    ClockConfig,
    Deal,
    MatchState,
    apply,
    expire,
    forced_action,
    legal_actions,
    new_match,
    next_hand,
)
from .serialize import from_dict, to_dict
from .view import view_for

GOAL_ACTIONS_PER_S = 30_000
GOAL_ROUND_TRIP_US = 100.0
GOAL_VIEW_US = 100.0

# A step of a recorded match: ("apply", action, t) or ("deal", deal, t).
Step = tuple[str, Action | Deal, int]


@dataclass
class Recorded:
    """One random match, replayable without choosing anything."""

    first: Deal
    jockey: int | None
    steps: list[Step]
    mid_states: list[MatchState]
    final: MatchState


def _gap(rng: random.Random) -> int:
    # Mostly inside the 10 s delay, sometimes well past it, so clocks run down.
    r = rng.random()
    if r < 0.5:
        return rng.randint(0, 3000)
    if r < 0.9:
        return rng.randint(3000, 12_000)
    return rng.randint(12_000, 30_000)


def random_match(rng: random.Random, record: bool = False) -> Recorded:
    """Play one match to its end by random legal play; forced actions at once."""
    first = Deal.shuffled(rng)
    jockey = rng.choice((None, 0, 1))
    s = new_match(first, now_ms=0, clock=ClockConfig(), jockey=jockey)
    t = 0
    steps: list[Step] = []
    mids: list[MatchState] = []
    while s.phase != MATCH_OVER:
        if s.phase == HAND_OVER:
            t += rng.randint(0, 5000)
            deal = Deal.shuffled(rng)
            s, _ = next_hand(s, deal, t)
            if record:
                steps.append(("deal", deal, t))
            continue
        action = forced_action(s)
        if action is None:
            t += _gap(rng)
            action = rng.choice(legal_actions(s))
        s, events = expire(s, t)
        if events:
            if record:
                steps.append(("tick", action, t))
            break
        s, _ = apply(s, action, t)
        if record:
            steps.append(("apply", action, t))
            if 6 <= len(s.layout.placed) <= 12 and s.phase != MATCH_OVER:
                mids.append(s)
    return Recorded(first, jockey, steps, mids, s)


def replay(rec: Recorded) -> tuple[int, MatchState]:
    """Apply a recorded match's actions again; how many were applied, and the end state."""
    s = new_match(rec.first, now_ms=0, clock=ClockConfig(), jockey=rec.jockey)
    n = 0
    for kind, what, t in rec.steps:
        if kind == "apply":
            assert isinstance(what, Action)
            s, _ = apply(s, what, t)
            n += 1
        elif kind == "deal":
            assert isinstance(what, Deal)
            s, _ = next_hand(s, what, t)
        else:
            s, _ = expire(s, t)
    return n, s


Timing = tuple[float, float]  # (wall seconds, CPU seconds) per unit


def measure(units: int, body: Callable[[], object]) -> Timing:
    """Run ``body`` once; the wall (``perf_counter``) and CPU time per unit."""
    w0, c0 = time.perf_counter(), time.process_time()
    body()
    return (time.perf_counter() - w0) / units, (time.process_time() - c0) / units


def best_of(repeats: int, fn: Callable[[], Timing]) -> Timing:
    """The lowest wall and the lowest CPU time of ``repeats`` runs."""
    runs = [fn() for _ in range(repeats)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.bench", description=__doc__)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--quick", action="store_true", help="fewer matches and repeats")
    args = parser.parse_args(argv)
    n_matches = 40 if args.quick else 200
    repeats = 3 if args.quick else 7

    rng = random.Random(args.seed)
    recorded = [random_match(rng, record=True) for _ in range(n_matches)]
    n_actions = sum(1 for r in recorded for k, _, _ in r.steps if k == "apply")
    mids = [s for r in recorded for s in r.mid_states]
    if not mids:
        print("no mid-game states were reached", file=sys.stderr)
        return 1
    mids = mids[:: max(1, len(mids) // 500)]
    n_mid = len(mids)
    logless = []
    for s in mids:
        bare = s.copy()
        bare.log = []
        logless.append(bare)

    def replay_all() -> None:
        for r in recorded:
            replay(r)

    def play_matches() -> None:
        local = random.Random(args.seed + 1)
        for _ in range(n_matches):
            random_match(local)

    def dict_trips() -> None:
        for s in mids:
            from_dict(to_dict(s))

    def json_trips(states: list[MatchState]) -> Callable[[], None]:
        def run() -> None:
            for s in states:
                from_dict(json.loads(json.dumps(to_dict(s))))

        return run

    def views() -> None:
        for i, s in enumerate(mids):
            view_for(s, i % 2, s.last_t)

    # The recorded matches are fixtures, not work: keep the collector off them.
    gc.collect()
    gc.freeze()
    act = best_of(repeats, lambda: measure(n_actions, replay_all))
    match = best_of(repeats, lambda: measure(n_matches, play_matches))
    dtrip = best_of(repeats, lambda: measure(n_mid, dict_trips))
    jtrip = best_of(repeats, lambda: measure(n_mid, json_trips(mids)))
    jbare = best_of(repeats, lambda: measure(n_mid, json_trips(logless)))
    view = best_of(repeats, lambda: measure(n_mid, views))
    gc.unfreeze()

    def rate(t: Timing) -> tuple[str, str]:
        return f"{1 / t[0]:,.0f}", f"{1 / t[1]:,.0f}"

    def us(t: Timing) -> tuple[str, str]:
        return f"{t[0] * 1e6:.1f}", f"{t[1] * 1e6:.1f}"

    rows: list[tuple[str, tuple[str, str], str, bool | None]] = [
        ("applied actions per second", rate(act), f">= {GOAL_ACTIONS_PER_S:,}",
         1 / act[0] >= GOAL_ACTIONS_PER_S),
        ("complete random matches per second", (f"{1 / match[0]:,.1f}", f"{1 / match[1]:,.1f}"),
         "", None),
        ("dict round trip (to_dict + from_dict), us", us(dtrip), f"<= {GOAL_ROUND_TRIP_US:g}",
         dtrip[0] * 1e6 <= GOAL_ROUND_TRIP_US),
        ("JSON text round trip, us", us(jtrip), f"<= {GOAL_ROUND_TRIP_US:g}",
         jtrip[0] * 1e6 <= GOAL_ROUND_TRIP_US),
        ("  the same without the event log, us", us(jbare), "", None),
        ("view_for, us", us(view), f"<= {GOAL_VIEW_US:g}", view[0] * 1e6 <= GOAL_VIEW_US),
    ]  # fmt: skip
    print(
        f"engine benchmark: {n_matches} random matches ({n_actions} actions), "
        f"{n_mid} mid-game states; one core, best of {repeats}"
    )
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'wall':>10}  {'cpu':>10}  {'goal':>9}  met")
    print(f"{'-' * w}  {'-' * 10}  {'-' * 10}  {'-' * 9}  ---")
    for name, (wall, cpu), goal, met in rows:
        mark = "" if met is None else "yes" if met else "NO"
        print(f"{name:<{w}}  {wall:>10}  {cpu:>10}  {goal:>9}  {mark}")
    busy = act[0] / act[1] if act[1] > 0 else 1.0
    print(
        "wall = time.perf_counter (judged against the goals); cpu = time.process_time."
        + (f"\nwall/cpu = {busy:.2f}: the machine was busy, wall figures are pessimistic."
           if busy > 1.2 else "")
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
