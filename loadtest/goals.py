"""Goals that survive the machine: the server's cost in units of this machine's own speed.

Absolute figures moved 2–3× between machines of the same kind (issue 14), so
``make bench-load`` measures two yardsticks in the same run and states the
goals against them:

- **the engine**: µs of CPU per applied action, the measure of ``make bench``
  (``engine.bench``: recorded random matches replayed, the best of a few runs).
  A move's server CPU divided by it is the move's cost **in engine actions**;
- **the echo relay** (the ``echo`` probe): one ``group_send`` from one client to
  another through the server. An idle match's move is compared with it.

A third figure reads the first against the stack itself: **the echo relay under
load** (``probes.EchoLoad``), the server's CPU to carry one frame in and one out
with nothing behind them, in engine actions too.

Goals (issue 14): CPU per move ≤ :data:`MAX_ACTIONS_PER_MOVE` engine actions;
an idle move ≤ :data:`MAX_ECHO_RATIO` × the echo relay; and past saturation,
at 2.5× the load that fills the cores, moves/s ≥ 90 % of the peak with p99 ≤ 1 s
and no socket of an admitted match dropped.
"""

from __future__ import annotations

import gc
import os
import random
from typing import Any

from . import profile

MAX_ACTIONS_PER_MOVE = 150
MAX_ECHO_RATIO = 3.0
PAST_SATURATION = 2.5  # × the load that fills the cores
MIN_SHARE_OF_PEAK = 0.9
MAX_P99_MS = 1000.0
FILLED = 0.9  # the cores count as filled at this share of all of them


def engine_us_per_action(seed: int = 2024, matches: int = 40, repeats: int = 3) -> float:
    """CPU µs per applied action of the rules engine on this machine, now (``make bench``)."""
    from engine import bench

    rng = random.Random(seed)
    recorded = [bench.random_match(rng, record=True) for _ in range(matches)]
    n = sum(1 for r in recorded for kind, _, _ in r.steps if kind == "apply")

    def replay_all() -> None:
        for r in recorded:
            bench.replay(r)

    gc.collect()
    gc.freeze()
    try:
        _, cpu = bench.best_of(repeats, lambda: bench.measure(n, replay_all))
    finally:
        gc.unfreeze()
    return cpu * 1e6


def _level(row: dict[str, Any]) -> int | None:
    label = str(row.get("level", ""))
    head = label.split(" ")[0]
    return int(head) if label.endswith(" matches") and head.isdigit() else None


def evaluate(result: dict[str, Any], us_per_action: float | None) -> list[str]:
    """The goals' lines for one set-up's result."""
    lines = []
    rows = [r for r in result.get("rows") or [] if "moves_per_s" in r and _level(r)]
    if us_per_action:
        lines.append(
            f"engine (make bench's measure): {us_per_action:.1f} µs of CPU per applied action"
        )
        for r in rows:
            ms = r.get("server_cpu_ms_per_move")
            if ms:
                actions = ms * 1000 / us_per_action
                ok = "met" if actions <= MAX_ACTIONS_PER_MOVE else "**missed**"
                lines.append(
                    f"{r['level']}: server CPU per move {ms:.2f} ms = {actions:.0f} engine "
                    f"actions (goal ≤ {MAX_ACTIONS_PER_MOVE}) — {ok}"
                )
                if actions > MAX_ACTIONS_PER_MOVE:
                    lines.extend(_why_cpu(r, actions, us_per_action))
    probes = result.get("probes") or {}
    lines.extend(_transport_floor(probes, rows, us_per_action))
    echo, idle = (probes.get("echo") or {}).get("p50"), (probes.get("idle_move") or {}).get("p50")
    if echo and idle:
        ratio = idle / echo
        ok = "met" if ratio <= MAX_ECHO_RATIO else "**missed**"
        lines.append(
            f"idle move {idle:.2f} ms ÷ echo relay {echo:.2f} ms = {ratio:.1f}× "
            f"(goal ≤ {MAX_ECHO_RATIO:.0f}×) — {ok}"
        )
        if ratio > MAX_ECHO_RATIO:
            lines.extend(_why_idle(probes, echo))
    lines.extend(_past_saturation(rows))
    return lines


def _why_cpu(row: dict[str, Any], actions: float, us_per_action: float) -> list[str]:
    """Why a level's move cost more than the goal: its profile (loadtest/profile.py),
    and what carrying its frames costs on its own."""
    prof = row.get("profile")
    if not prof:
        return []
    out = [f"{row['level']}: {line}" for line in profile.lines(prof, row.get(
        "server_cpu_ms_per_move"), us_per_action)]  # fmt: skip
    shares = prof.get("shares") or {}
    carrying = (shares.get(profile.KERNEL, 0.0) + shares.get(profile.TRANSPORT, 0.0)) * actions
    if carrying:
        rest = actions - carrying
        out.append(
            f"{row['level']}: why — carrying the frames (the kernel's system calls and the "
            f"transport) is {carrying:.0f} engine actions of the {actions:.0f}, the move's own "
            f"work {rest:.0f}"
            + (
                f"; the first alone is over the goal ({MAX_ACTIONS_PER_MOVE})"
                if carrying > MAX_ACTIONS_PER_MOVE
                else f"; the goal ({MAX_ACTIONS_PER_MOVE}) leaves the move's own work "
                f"{max(0.0, MAX_ACTIONS_PER_MOVE - carrying):.0f}"
            )
        )
    return out


def _why_idle(probes: dict[str, Any], echo: float) -> list[str]:
    """Why an idle move is more than the goal's multiple of the echo relay: its
    transaction's share (matches/play/stages.py, the means of the idle match's moves),
    beside a bare durable commit on the same database."""
    stages = (probes.get("idle_move") or {}).get("server_stages_mean_ms") or {}
    txn = sum(stages.get(s, 0.0) for s in ("taken", "locked", "committed"))
    if not txn:
        return []
    line = (
        f"why — the move's transaction in its web process (taken + locked + committed, "
        f"matches/play/stages.py) took {txn:.2f} ms = {txn / echo:.1f}× the echo relay on "
        f"its own, against the goal's {MAX_ECHO_RATIO:.0f}× for the whole move"
    )
    commit = (probes.get("durable_commit") or {}).get("p50")
    if commit:
        line += (
            f"; a bare one-row UPDATE and COMMIT on the same database: {commit:.2f} ms "
            f"({commit / echo:.1f}× the relay)"
        )
    return [line]


def _transport_floor(
    probes: dict[str, Any], rows: list[dict[str, Any]], us_per_action: float | None
) -> list[str]:
    """What carrying frames costs on its own (the echo load), in engine actions.

    A relay carries two frames (one in, one out, with a ``group_send`` between); a move
    carries three (the player's frame in, each seat's frame out) before its transaction,
    the rules engine and a page's fragments: half a relay a frame, a move's transport is
    about a relay and a half."""
    relay = (probes.get("echo_load") or {}).get("server_cpu_ms_per_relay")
    if not relay or not us_per_action:
        return []
    actions = relay * 1000 / us_per_action
    carried = 1.5 * actions
    line = (
        f"echo relay under load (a frame in, a group_send, a frame out): server CPU "
        f"{relay:.3f} ms = {actions:.0f} engine actions; a move's three frames ≈ 1.5 relays "
        f"= {carried:.0f} engine actions before its transaction"
    )
    if carried >= MAX_ACTIONS_PER_MOVE:
        line += f" (the goal, {MAX_ACTIONS_PER_MOVE}, is below the transport alone)"
    moves = [r["server_cpu_ms_per_move"] for r in rows if r.get("server_cpu_ms_per_move")]
    if moves:
        lo, hi = min(moves) / relay, max(moves) / relay
        line += (
            f"; a move cost {lo:.1f} relays"
            if lo == hi
            else f"; a move cost {lo:.1f}–{hi:.1f} relays"
        )
    return [line]


def _past_saturation(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    cores = (os.cpu_count() or 1) * 100
    full = next((r for r in rows if r.get("machine_cpu_pct", 0) >= FILLED * cores), None)
    peak = max(rows, key=lambda r: r["moves_per_s"])
    if full is None:
        return [
            f"past saturation: no level filled the cores (≥ {FILLED * cores:.0f} % of the "
            f"machine); add higher --levels"
        ]
    want = PAST_SATURATION * (_level(full) or 0)
    beyond = next((r for r in rows if (_level(r) or 0) >= want), None)
    head = f"the cores filled at {full['level']}; peak {peak['moves_per_s']} moves/s"
    if beyond is None:
        return [
            f"past saturation: {head}; {want:.0f} matches not measured (add --levels {want:.0f})"
        ]
    share = beyond["moves_per_s"] / peak["moves_per_s"] if peak["moves_per_s"] else 0.0
    p99 = (beyond.get("latency_ms") or {}).get("p99")
    dropped = beyond.get("dropped_sockets", 0)
    ok = share >= MIN_SHARE_OF_PEAK and p99 is not None and p99 <= MAX_P99_MS and dropped == 0
    return [
        f"past saturation: {head}; at {beyond['level']} {beyond['moves_per_s']} moves/s = "
        f"{share:.0%} of peak, p99 {p99} ms, {dropped} dropped (goal ≥ 90 %, ≤ 1 s, 0) — "
        + ("met" if ok else "**missed**")
    ]
