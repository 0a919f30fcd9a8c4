"""`make bench-load`'s goals, stated in this machine's own speed (loadtest/goals.py)."""

from __future__ import annotations

from typing import Any

from loadtest import goals


def _row(level: int, moves: float, ms: float, machine: float, p99: float, dropped: int = 0) -> Any:
    return {
        "level": f"{level} matches",
        "moves_per_s": moves,
        "server_cpu_ms_per_move": ms,
        "machine_cpu_pct": machine,
        "latency_ms": {"p99": p99},
        "dropped_sockets": dropped,
    }


def test_the_engine_yardstick_is_a_positive_cpu_time_per_action() -> None:
    us = goals.engine_us_per_action(matches=4, repeats=1)
    assert 0.5 < us < 5_000


def test_cpu_per_move_is_counted_in_engine_actions_and_the_idle_move_against_echo() -> None:
    result = {
        "probes": {"echo": {"p50": 1.0}, "idle_move": {"p50": 4.9}},
        "rows": [_row(50, 20, 2.0, 30, 10), _row(200, 80, 4.0, 90, 20)],
    }
    lines = goals.evaluate(result, us_per_action=20.0)
    assert (
        "50 matches: server CPU per move 2.00 ms = 100 engine actions (goal ≤ 150) — met" in lines
    )
    assert any(
        line.startswith("200 matches:") and "200 engine actions" in line and "missed" in line
        for line in lines
    )
    assert "idle move 4.90 ms ÷ echo relay 1.00 ms = 4.9× (goal ≤ 3×) — **missed**" in lines
    assert any("no level filled the cores" in line for line in lines)


def test_past_saturation_is_judged_at_two_and_a_half_times_the_load_that_filled_the_cores(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(goals.os, "cpu_count", lambda: 2)
    rows = [_row(200, 80, 3, 100, 20), _row(400, 150, 3, 185, 90), _row(1000, 140, 3, 199, 800)]
    (line,) = goals.evaluate({"rows": rows}, None)
    assert "the cores filled at 400 matches; peak 150 moves/s" in line
    assert "at 1000 matches 140 moves/s = 93% of peak" in line and line.endswith("met")
    rows[2] = _row(1000, 60, 3, 199, 3000, dropped=12)
    (line,) = goals.evaluate({"rows": rows}, None)
    assert "40% of peak" in line and line.endswith("**missed**")
    (line,) = goals.evaluate({"rows": rows[:2]}, None)
    assert "1000 matches not measured" in line


def test_the_echo_load_reads_a_move_against_what_carrying_its_frames_costs() -> None:
    result = {
        "probes": {"echo_load": {"server_cpu_ms_per_relay": 1.2}},
        "rows": [_row(200, 80, 4.8, 90, 20), _row(400, 150, 6.0, 185, 90)],
    }
    lines = goals.evaluate(result, us_per_action=10.0)
    (line,) = [line for line in lines if line.startswith("echo relay under load")]
    # 1.2 ms = 120 engine actions a relay; three frames are a relay and a half: 180.
    assert "1.200 ms = 120 engine actions" in line and "1.5 relays = 180 engine actions" in line
    assert "the goal, 150, is below the transport alone" in line
    assert line.endswith("a move cost 4.0–5.0 relays")
    # A cheaper transport: the line says what it costs, and does not blame it.
    result["probes"]["echo_load"]["server_cpu_ms_per_relay"] = 0.6
    (line,) = [x for x in goals.evaluate(result, 10.0) if x.startswith("echo relay")]
    assert "= 90 engine actions before its transaction;" in line and "below" not in line
    # No echo load, or no yardstick: no line.
    assert not [x for x in goals.evaluate({"rows": result["rows"]}, 10.0) if "echo relay" in x]
    assert not [x for x in goals.evaluate(result, None) if x.startswith("echo relay")]
