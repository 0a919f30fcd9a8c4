"""`make bench-load` end to end, small: the embedded default, 2 matches, a few seconds.

It starts the server as `make run` would, plays over JSON and HTML sockets,
and prints its tables. Figures are not judged here (they are the benchmark's
job); the test checks that there are figures: moves made by both kinds of bot,
latencies recorded, the server's CPU and memory read, the tables printed.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_harness_plays_two_matches_and_prints_its_tables(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadtest",
            "--setups",
            "embedded",
            "--levels",
            "2",
            "--window",
            "6",
            "--settle",
            "0.5",
            "--think",
            "0.1-0.4",
            "--idle",
            "0",
            "--probes",
            "echo",
            "--probe-seconds",
            "2",
            "--echo-pairs",
            "3",
            "--json",
            str(out),
            "--log-dir",
            str(tmp_path),
        ],  # fmt: skip
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "| level | live | ramp s | offered/s | moves/s | p50 ms |" in run.stdout
    assert "| 2 matches | 2 |" in run.stdout
    assert "move/echo ratio" in run.stdout
    assert "echo load (3 pairs" in run.stdout

    result = json.loads(out.read_text())["setups"]["embedded"]
    row = result["rows"][0]
    assert row["moves_by_json_bots"] > 0 and row["moves_by_html_bots"] > 0
    for to in ("latency_to_json_ms", "latency_to_html_ms"):
        assert row[to]["n"] > 0 and row[to]["p50"] > 0
    assert row["moves_per_s"] > 0 and row["errors"] == {} and row["dropped_sockets"] == 0
    assert row["cpu_pct"]["web"] > 0 and row["rss_mb"]["web"][0] > 10
    assert row["server_cpu_ms_per_move"] > 0
    # The window's profile of the web process (loadtest/profile.py): py-spy read it.
    prof = row["profile"]
    assert "skipped" not in prof, prof
    assert prof["samples"] > 0 and abs(sum(prof["shares"].values()) - 1) < 1e-6
    assert "where the web processes' CPU went (py-spy" in run.stderr
    # Each move a JSON bot saw split at the server's receipt stamp: the way in and the
    # way back out add up to the move's latency (one machine: one clock, to a ms or two).
    split = (row["inbound_ms"], row["outbound_ms"])
    assert split[0]["n"] == split[1]["n"] == row["latency_to_json_ms"]["n"]
    assert -2 < split[0]["p50"] < row["latency_to_json_ms"]["max"]
    assert 0 < split[1]["p50"] <= row["latency_to_json_ms"]["max"] + 2
    # And how late the harness itself was in the window: its own, not the server's.
    stalls = row["harness_stalls"]
    assert stalls["loop_late_max_ms"] >= 0 and stalls["gc_pause_total_ms"] >= 0
    assert result["probes"]["echo"]["n"] == 200 and result["probes"]["idle_move"]["n"] > 0
    # Three pairs relaying once a second each for two seconds: their relays were counted,
    # and the server's CPU read over them.
    load = result["probes"]["echo_load"]
    assert load["pairs"] == 3 and 3 <= load["relays"] <= 12
    assert load["busy_by_kind_pct"]["web"] > 0 and load["server_cpu_ms_per_relay"] is not None
    # It was the operator's `make run`, and it is gone with the run.
    log = (tmp_path / "bench-load-embedded.log").read_text()
    assert f"Spectacular Bid is running on {result['url']}" in log
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(result["url"].rsplit(":", 1)[1])), timeout=2)
