"""How strong and how fast the computer player is: engine-only matches (no Django, no clock).

    python -m bots.bench [--matches N] [--pairings 2v1,3v2] [--jobs J] [--seed S]
    python -m bots.bench --timing [--matches N]

Each pairing plays ``N`` matches (default 200, or ``BOTS_BENCH_MATCHES``) in
pairs with the same seeded deals, the challenger in seat 0 in one and seat 1
in the other, spread over ``J`` processes (default: every core). It prints
each challenger's win rate with its 95 % Wilson interval against the goal,
the points per hand each side received (placements, block settlements and
auction payments), and the milliseconds per decision (p50, p99, max; CPU
and wall) of each level. Level 3 plays its default ``PLAYOUTS`` per decision
without the wall-clock cap, so a seed gives the same matches on any machine,
however busy; the table counts the decisions the cap would have cut short.

``--timing`` is the short section ``make bench`` prints: a few matches on
one core with the players exactly as deployed (cap included), only the
milliseconds per decision.

The exit status is 0 whenever the benchmark ran; the table says which goals were met.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from .arena import Result, play_match
from .player import PLAYOUTS, TIME_LIMIT_MS

# (challenger, opponent): the share of matches the challenger must win.
GOALS = {(2, 1): 0.80, (3, 2): 0.60}
NAMES = {1: "入門 beginner", 2: "中級 intermediate", 3: "上級 advanced"}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95 % for ``z = 1.96``).

    >>> [round(x, 3) for x in wilson(160, 200)]
    [0.739, 0.85]
    """
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def percentile(xs: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0..100) of ``xs``.

    >>> percentile([float(x) for x in range(1, 101)], 99)
    99.0
    """
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


@dataclass
class Tally:
    """A pairing's results, from the challenger's side."""

    matches: int = 0
    wins: int = 0
    unfinished: int = 0
    hands: int = 0
    received: list[int] = field(default_factory=lambda: [0, 0])  # challenger, opponent

    def add(self, r: Result, challenger_seat: int) -> None:
        self.matches += 1
        self.wins += r.winner == challenger_seat
        self.unfinished += r.winner is None
        self.hands += r.hands
        self.received[0] += r.received[challenger_seat]
        self.received[1] += r.received[1 - challenger_seat]


Task = tuple[int, int, int, int, bool]  # challenger, opponent, seed, challenger's seat, capped


def _play(task: Task) -> tuple[Task, Result]:
    hi, lo, seed, seat, capped = task
    levels = (hi, lo) if seat == 0 else (lo, hi)
    cap = TIME_LIMIT_MS if capped else None
    return task, play_match(levels, seed, playouts=PLAYOUTS, time_limit_ms=cap)


def _tasks(pairings: list[tuple[int, int]], matches: int, seed: int, capped: bool) -> list[Task]:
    # The slow pairings first, so the processes finish together.
    out = []
    for hi, lo in sorted(pairings, key=lambda p: -max(p)):
        for k in range((matches + 1) // 2):
            out += [(hi, lo, seed + k, 0, capped), (hi, lo, seed + k, 1, capped)]
    return out


Timings = dict[str, dict[int, list[float]]]  # "wall" or "cpu" -> level -> ms per decision


def _progress(results: Iterable[tuple[Task, Result]], total: int) -> Iterable[tuple[Task, Result]]:
    """Pass the results on, counting them on stderr (a full run takes minutes)."""
    tty = sys.stderr.isatty()
    for done, item in enumerate(results, 1):
        if tty:
            print(f"\r{done}/{total} matches", end="\n" if done == total else "", file=sys.stderr)
        elif done % 50 == 0 or done == total:
            print(f"{done}/{total} matches", file=sys.stderr)
        yield item


def run(
    pairings: list[tuple[int, int]], matches: int, seed: int, jobs: int, capped: bool = False
) -> tuple[dict[tuple[int, int], Tally], Timings, float]:
    """Play every match; the tallies, ms per decision by level, and the wall time."""
    tasks = _tasks(pairings, matches, seed, capped)
    tallies = {p: Tally() for p in pairings}
    ms: Timings = {"wall": {}, "cpu": {}}
    t0 = time.perf_counter()
    results: Iterable[tuple[Task, Result]]
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            results = list(_progress(pool.imap_unordered(_play, tasks), len(tasks)))
    else:
        results = _progress(map(_play, tasks), len(tasks))
    for (hi, lo, _, seat, _), r in results:
        tallies[(hi, lo)].add(r, seat)
        for s in (0, 1):
            ms["wall"].setdefault(r.levels[s], []).extend(r.decision_ms[s])
            ms["cpu"].setdefault(r.levels[s], []).extend(r.decision_cpu_ms[s])
    return tallies, ms, time.perf_counter() - t0


def print_timing(ms: Timings) -> None:
    print("ms per decision the player makes (forced actions are the server's): CPU / wall")
    print(f"{'level':<20}  {'decisions':>9}  {'p50':>13}  {'p99':>13}  {'max':>13}")
    for level in sorted(ms["cpu"]):
        cpu, wall = ms["cpu"][level], ms["wall"][level]
        cells = [f"{percentile(cpu, q):.1f} / {percentile(wall, q):.1f}" for q in (50, 99, 100)]
        print(f"{level} {NAMES[level]:<18}  {len(cpu):>9}  " + "  ".join(f"{c:>13}" for c in cells))
    over = sum(x > TIME_LIMIT_MS for x in ms["wall"].get(3, []))
    print(
        f"level 3 budget: {PLAYOUTS} playouts per decision; as deployed, also stopped at "
        f"{TIME_LIMIT_MS} ms of wall time ({over} decisions here took longer). CPU time is "
        "the cost on one core; wall time adds the waits of a busy machine."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots.bench", description=__doc__)
    parser.add_argument("--matches", type=int, default=None, help="per pairing (default 200)")
    parser.add_argument("--pairings", default="2v1,3v2", help="e.g. 2v1,3v2")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timing", action="store_true", help="ms per decision only, one core")
    args = parser.parse_args(argv)
    default = 4 if args.timing else 200
    matches = args.matches or int(os.environ.get("BOTS_BENCH_MATCHES", default))
    pairings = [(int(a), int(b)) for a, b in (p.split("v") for p in args.pairings.split(","))]

    if args.timing:
        _, ms, wall = run([(3, 2), (2, 1)], matches, args.seed, jobs=1, capped=True)
        print(f"computer player: {matches} matches each of 3v2 and 2v1 on one core ({wall:.0f} s)")
        print_timing(ms)
        return 0

    tallies, ms, wall = run(pairings, matches, args.seed, args.jobs)
    print(
        f"computer player benchmark: {matches} matches per pairing, seeded deals, seats "
        f"swapped between paired matches, no clock; {args.jobs} processes, {wall:.0f} s"
    )
    head = (
        f"{'pairing':<10}  {'matches':>7}  {'won':>4}  {'win rate':>8}  {'95% interval':>13}  "
        f"{'goal':>5}  {'met':>3}  {'points/hand':>13}  {'hands/match':>11}"
    )
    print(head)
    print("-" * len(head))
    for (hi, lo), t in tallies.items():
        lo_ci, hi_ci = wilson(t.wins, t.matches)
        goal = GOALS.get((hi, lo))
        met = "" if goal is None else "yes" if t.wins >= goal * t.matches else "NO"
        per_hand = f"{t.received[0] / t.hands:.1f} / {t.received[1] / t.hands:.1f}"
        print(
            f"{hi} vs {lo}{'':<4}  {t.matches:>7}  {t.wins:>4}  {t.wins / t.matches:>8.1%}  "
            f"{f'{lo_ci:.1%}–{hi_ci:.1%}':>13}  {'' if goal is None else f'{goal:.0%}':>5}  "
            f"{met:>3}  {per_hand:>13}  {t.hands / t.matches:>11.1f}"
        )
        if t.unfinished:
            print(f"  {t.unfinished} matches stopped unfinished (counted as not won)")
    print("points/hand: what the challenger / its opponent received per hand, on average")
    print_timing(ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
