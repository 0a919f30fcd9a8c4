"""bench-load's profile of the web processes (loadtest/profile.py): why a goal was missed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from loadtest import goals, profile

LOOP = [
    "_run_module_as_main (<frozen runpy>:198)",
    "main (config/serve.py:215)",
    "Server.run (daphne/server.py:155)",
    "BaseEventLoop._run_once (asyncio/base_events.py:1922)",
    "Handle._run (asyncio/events.py:80)",
]
CONSUMER = [*LOOP, "LayerSafe.dispatch (matches/realtime/base.py:90)"]
THREAD = [
    "Thread._bootstrap (threading.py:1002)",
    "PriorityExecutor._work (matches/play/dbpool.py:120)",
    "SyncToAsync.thread_handler (asgiref/sync.py:522)",
    "call (matches/play/db.py:40)",
]


def test_each_sample_belongs_to_the_innermost_code_of_ours_that_it_is_in() -> None:
    layer = profile.layer
    act = [*THREAD, "act (matches/play/act.py:120)", "save_change (matches/play/store.py:300)"]
    # A library counts for the code that called it: psycopg under store.py is the move.
    assert layer([*act, "Cursor.execute (psycopg/cursor.py:100)"]) == "move"
    draw = [*CONSUMER, "render_changed (matches/ui/fragments.py:80)"]
    assert layer([*draw, "root (hand.html:3)", "escape (markupsafe/__init__.py:1)"]) == "fragments"
    assert layer([*draw, "geometry (table/geometry.py:90)"]) == "fragments"
    assert layer([*THREAD, "view (matches/play/audience.py:197)"]) == "views"
    assert layer([*THREAD]) == "hop"
    pulse = ["Thread.run (threading.py:982)", "pulse (matches/clock/liveness.py:300)"]
    assert layer([*pulse, "Pipeline.execute (redis/client.py:1)"]) == "upkeep"
    # ...but a consumer's send, down in Daphne and Twisted, is the transport's work, and
    # so are the event loop's own frames with nothing of ours inside them.
    send = [*CONSUMER, "MatchConsumer._send_view (matches/realtime/match_consumer.py:400)"]
    assert layer([*send, "Server.handle_reply (daphne/server.py:200)"]) == profile.TRANSPORT
    assert layer([*LOOP, "EpollSelector.select (selectors.py:468)"]) == profile.TRANSPORT
    assert layer(send) == "consumers"
    # A stack read only in part: the layer its innermost known library serves.
    assert layer(["BaseCursor._execute_gen (psycopg/_cursor_base.py:195)"]) == "move"
    assert layer(["PubSub.parse_response (redis/asyncio/client.py:1572)"]) == "publish"
    assert layer(["something (somewhere.py:1)"]) == "other"
    # Absolute paths (py-spy keeps some) are read as module paths.
    root = Path(profile.__file__).resolve().parents[1]
    assert layer([f"act ({root}/matches/play/act.py:1)"]) == "move"
    venv = "/x/.venv/lib/python3.11/site-packages"
    assert layer([f"a ({root}/config/serve.py:1)", f"b ({venv}/twisted/x.py:1)"]) == "transport"


def test_py_spys_raw_lines_are_tallied_by_layer() -> None:
    raw = "\n".join(
        [
            ";".join([*THREAD, "act (matches/play/act.py:1)"]) + " 30",
            ";".join([*LOOP, "EpollSelector.select (selectors.py:468)"]) + " 10",
            "not a sample line",
            "",
        ]
    )
    counts = profile.tally(raw)
    assert counts == {"move": 30, "transport": 10}
    assert profile.shares(counts) == {"transport": 0.25, "move": 0.75}


def test_the_profile_line_gives_each_share_in_engine_actions_a_move() -> None:
    prof = {"samples": 400, "shares": {"kernel": 0.2, "transport": 0.3, "move": 0.5}}
    (line,) = profile.lines(prof, cpu_ms=4.0, us_per_action=10.0)  # 400 engine actions a move
    assert "400 samples" in line
    assert line.index("the move's transaction") < line.index("the transport")  # biggest first
    assert "the move's transaction (rules, rows, database) 50 % = 200" in line
    assert "the kernel (system calls: sockets, epoll, thread wake-ups) 20 % = 80" in line
    (skipped,) = profile.lines({"skipped": "py-spy is not installed"}, 4.0, 10.0)
    assert skipped == "no profile: py-spy is not installed"


def test_a_missed_goal_says_why_from_the_same_runs_profile_and_stages() -> None:
    row = {
        "level": "250 matches",
        "moves_per_s": 100,
        "server_cpu_ms_per_move": 4.0,
        "machine_cpu_pct": 60,
        "latency_ms": {"p99": 20},
        "dropped_sockets": 0,
        "profile": {"samples": 900, "shares": {"kernel": 0.25, "transport": 0.25, "move": 0.5}},
    }
    result = {
        "rows": [row],
        "probes": {
            "echo": {"p50": 0.5},
            "idle_move": {
                "p50": 5.0,
                "server_stages_mean_ms": {"taken": 0.5, "locked": 1.0, "committed": 1.5},
            },
            "durable_commit": {"p50": 0.3},
        },
    }
    lines = goals.evaluate(result, us_per_action=10.0)  # 400 engine actions a move
    why = [line for line in lines if "why" in line]
    assert len(why) == 2, lines
    assert "carrying the frames (the kernel's system calls and the transport) is 200" in why[0]
    assert "the move's own work 200; the first alone is over the goal (150)" in why[0]
    assert "took 3.00 ms = 6.0× the echo relay on its own" in why[1]
    assert "UPDATE and COMMIT on the same database: 0.30 ms (0.6× the relay)" in why[1]
    assert any(line.startswith("250 matches: where the web processes' CPU went") for line in lines)
    # A goal met needs no reason.
    row["server_cpu_ms_per_move"] = 1.0
    result["probes"]["idle_move"]["p50"] = 1.0
    assert not [line for line in goals.evaluate(result, us_per_action=10.0) if "why" in line]


BURNER = """
import sys, time

def draw():
    end = time.monotonic() + float(sys.argv[1])
    n = 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(500))
    return n

print("ready", flush=True)
draw()
"""


def test_the_sampler_reads_a_running_process_with_py_spy(tmp_path: Path) -> None:
    """A process busy in code laid out as ours (matches/ui/) is sampled for a second:
    nearly all of its Python samples fall in the fragments' layer."""
    pkg = tmp_path / "matches" / "ui"
    pkg.mkdir(parents=True)
    (tmp_path / "matches" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "burn.py").write_text(textwrap.dedent(BURNER))
    proc = subprocess.Popen(
        [sys.executable, "-m", "matches.ui.burn", "20"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"

        async def sample() -> dict[str, Any]:
            sampler = profile.Sampler([proc.pid], 1.0)
            await sampler.start()
            return await sampler.result()

        got = asyncio.run(sample())
    finally:
        proc.kill()
        proc.wait()
    assert "skipped" not in got, got
    assert got["samples"] >= 20
    assert got["shares"]["fragments"] > 0.8 * (1 - got["shares"]["kernel"]), got


def test_without_py_spy_the_profile_is_skipped_and_says_so(monkeypatch: Any) -> None:
    monkeypatch.setattr(profile.Sampler, "program", staticmethod(lambda: None))

    async def sample() -> dict[str, Any]:
        sampler = profile.Sampler([1], 1.0)
        await sampler.start()
        return await sampler.result()

    assert asyncio.run(sample()) == {"skipped": "py-spy is not installed"}
