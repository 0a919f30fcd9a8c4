"""The terminal demo and the benchmark's match player (python -m engine.demo / engine.bench)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine import bench, demo

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seed", [1, 7, 11, 2024])
def test_the_demo_plays_a_whole_match_in_a_bounded_readable_story(seed: int) -> None:
    lines: list[str] = []
    final = demo.play(seed, max_hands=6, out=lines.append)
    assert final.phase == engine.MATCH_OVER
    assert len(lines) <= 400
    assert sum(line.startswith("=== Hand ") for line in lines) == final.hand_no + 1
    result = [line for line in lines if line.startswith("RESULT: ")]
    assert result == [lines[-2]] and f"Seat {final.winner} wins" in result[0]
    assert lines[-1].strip() == f"final balances {final.balances[0]} / {final.balances[1]}"
    placements = [line for line in lines if ": [" in line and " ends " in line]
    assert len(placements) >= 10
    assert any("opening" in line for line in placements)


def test_the_demo_is_reproducible_by_seed_and_runs_as_a_module() -> None:
    first: list[str] = []
    again: list[str] = []
    demo.play(5, 6, first.append)
    demo.play(5, 6, again.append)
    assert first == again
    proc = subprocess.run(
        [sys.executable, "-m", "engine.demo", "--seed", "5"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == first


def test_the_demo_layout_turns_tiles_so_touching_halves_meet() -> None:
    s = engine.new_match(
        engine.Deal(((((1, 4), (4, 4), (0, 0))), ((1, 1), (2, 4), (0, 6))), ()),
        jockey=0,
        clock=None,
    )
    s, _ = engine.apply(s, engine.Action("decline", 1), 0)
    for p, tile, at in [
        (0, (1, 4), None),
        (1, (1, 1), ((1, 4), "low")),
        (0, (4, 4), ((1, 4), "high")),
        (1, (2, 4), ((4, 4), "straight_b")),
    ]:
        s, _ = engine.apply(s, engine.Action("place", p, tile=tile, at=at), 0)
    assert demo.layout_lines(s) == [
        "    [1|4] opening",
        "      low        [1|1]*",
        "      high       [4|4][4|2]",
    ]


def test_the_benchmark_replays_exactly_the_match_it_recorded() -> None:
    rng = random.Random(3)
    for _ in range(5):
        rec = bench.random_match(rng, record=True)
        applied = sum(1 for kind, _, _ in rec.steps if kind == "apply")
        n, final = bench.replay(rec)
        assert n == applied and final.phase == engine.MATCH_OVER
        assert engine.to_dict(final) == engine.to_dict(rec.final)
    assert all(s.phase != engine.MATCH_OVER for s in rec.mid_states)
    assert all(6 <= len(s.layout.placed) <= 12 for s in rec.mid_states)
