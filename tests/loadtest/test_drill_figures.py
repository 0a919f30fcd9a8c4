"""The fault drill's figures (loadtest/drill.py), from records made by hand.

What a player would notice: main time gone from their clock that their own
thinking does not explain, a move they saw that the server's log lacks, an
outage given back twice, a match voided without cause. The drill itself runs
end to end in tests/drill/.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from loadtest import bots, drill
from loadtest.view import Seen


def _seen(
    version: int,
    main: list[int],
    running: int | None,
    events: list[tuple[int, str, int | None]] | None = None,
) -> Seen:
    return Seen(
        version=version,
        status="live",
        phase="play",
        seat=0,
        my_turn=False,
        can_start=False,
        can_continue=False,
        main=main,
        running=running,
        events=events or [],
    )


def _table(rec: bots.Recorder) -> bots.Table:
    fleet: Any = SimpleNamespace(rec=rec)
    a, b = bots.Account("a", "k"), bots.Account("b", "k")
    table = bots.Table(fleet, a, b, bots.Behaviour(), random.Random(1))
    table.match_id = 7
    table.bots = [SimpleNamespace(thought=0.0), SimpleNamespace(thought=0.0)]  # type: ignore[list-item]
    return table


def test_main_time_a_seat_lost_beyond_its_own_thinking_is_charged_to_the_platform() -> None:
    rec = bots.Recorder()
    table = _table(rec)
    table.account_main(_seen(1, [120_000, 120_000], None), 1.0)  # before the start
    table.account_main(_seen(2, [120_000, 120_000], 0), 2.0)  # seat 0 decides
    table.bots[0].thought = 4.0  # it thought 4 s, well inside the 10 s delay...
    table.account_main(_seen(3, [117_000, 120_000], 1), 3.0)  # ...and lost 3 s of main time
    table.bots[1].thought = 12.0  # seat 1 thought 12 s: 2 s past the delay are its own
    table.account_main(_seen(4, [117_000, 118_000], 0), 4.0)
    table.account_main(_seen(3, [117_000, 120_000], 1), 5.0)  # a late, older frame: ignored
    assert rec.charges == [(3.0, 7, 0, 3_000, 3)]


def _window(**kw: Any) -> drill.Window:
    w = drill.Window("all 2 web processes · SIGKILL", t0=10.0, wall0=1000.0, live=2, tier=True)
    w.t1, w.wall1, w.healthy_s = 20.0, 1010.0, 7.0
    for k, v in kw.items():
        setattr(w, k, v)
    return w


def test_a_window_compares_what_the_seats_saw_with_the_servers_log() -> None:
    rec = bots.Recorder()
    rec.events = {
        (1, 5): ("place", 0, 11.0),  # in the log
        (1, 6): ("bid", 1, 12.0),  # missing from the log: lost
        (2, 9): ("place", 1, 13.0),  # in the log, but by the other seat: lost
        (2, 10): ("draw", 1, 13.0),  # not a player's move
        (2, 3): ("place", 0, 9.0),  # before the window
    }
    rec.versions = {1: (8, 12.0), 2: (12, 14.0)}  # match 2: a version the log never reached
    rec.charges = [(15.0, 1, 0, 1_500.4, 8), (25.0, 2, 1, 800.0, 12)]
    rec.drops = [(10.1, 1006), (10.2, 1006)]
    rec.errors = [(11.0, "ws_handshake_503"), (12.0, "ws_handshake_503")]
    log = drill.Log(
        versions={1: 8, 2: 11},
        events={(1, 5): ("place", 0), (2, 9): ("place", 0), (2, 3): ("place", 0)},
        platform=[
            (1, "credit", {"ms": 6_000, "to": 1_005_000}, 1_005_000),
            # Its way back after that outage: the next 1.5 s, given once.
            (1, "credit", {"ms": 1_500, "to": 1_006_500, "rejoin": True}, 1_006_500),
            (2, "credit", {"ms": 6_000, "to": 1_005_000}, 1_005_000),
            # A killed peer's seat given back 1_003_100 → 1_005_100: 1.9 s of it twice.
            (2, "credit", {"ms": 2_000, "to": 1_005_100, "socket": True}, 1_005_100),
            (2, "timeout", {"player": 1}, 1_006_000),
            (1, "credit", {"ms": 9_000}, 1_020_000),  # after the window
        ],
    )
    r = drill.row(_window(), rec, log)
    assert r["moves"] == 3 and r["moves_lost"] == 3
    assert {x.get("seq") for x in r["lost"]} == {6, 9, None}
    assert r["charged_ms"] == 1_500
    assert r["charged"] == [
        {"match": 1, "seat": 0, "ms": 1_500, "seen_charged": 5.0, "reconnected": []}
    ]
    assert (r["credited_matches"], r["credited_max_ms"], r["credited_twice"]) == (2, 8_000, 1)
    assert r["credited_ms"] == 15_500 and r["rejoins"] == 1
    assert r["errors"] == {"ws_handshake_503": 2, "lost_on_time": 1} and r["dropped"] == 2
    assert drill.broken(r) == [
        "3 moves lost",
        "1500 ms charged",
        "1 matches given the same time back twice",
    ]
    assert "| all 2 web processes · SIGKILL | 2 | 3 | 3 | 1500 | 2 (≤ 8.0 s) |" in drill.table([r])


@pytest.mark.parametrize(
    ("tier", "healthy_s", "justified"),
    [(True, 7.0, False), (False, 200.0, False), (True, 200.0, True)],
)
def test_only_an_outage_of_the_tier_over_three_minutes_justifies_a_void(
    tier: bool, healthy_s: float, justified: bool
) -> None:
    reason = "The server was unreachable for more than three minutes while ..."
    log = drill.Log({3: 20}, {}, [(3, "voided", {"reason": reason}, 1_004_000)])
    r = drill.row(_window(tier=tier, healthy_s=healthy_s), bots.Recorder(), log)
    assert r["voided"] == 1 and r["voided_unjustified"] == (not justified)
    assert (drill.broken(r) == []) is justified


def test_the_faults_and_the_environment_come_from_the_procfile(tmp_path: Path) -> None:
    cluster = drill.Cluster(
        "postgres://postgres@127.0.0.1:5432/unit_drill",
        "redis://127.0.0.1:6379/5",
        log_dir=tmp_path,
    )
    try:
        assert cluster.roles == {
            "web1": "web",
            "web2": "web",
            "proxy": "proxy",
            "worker": "worker",
            "beat": "beat",
        }
        faults = drill.targets(cluster.roles)
        assert {n: f.types for n, f in faults.items()} == {
            "one-web": ("web1", "web2"),  # the busier one is hit
            "all-web": ("web1", "web2"),
            "worker": ("worker",),
            "beat": ("beat",),
            "proxy": ("proxy",),
        }
        assert [n for n, f in faults.items() if f.tier] == ["all-web", "proxy"]
        env = cluster.type_env("web2")
        port = cluster.port
        assert (env["SB_PORT"], env["WEB1_PORT"], env["WEB2_PORT"]) == tuple(
            str(p) for p in (port, port + 1, port + 2)
        )
        assert cluster.web_port("web2") == port + 2
        assert env["PATH"].startswith(str(drill.ROOT / ".venv" / "bin") + ":")
        assert env["DATABASE_URL"].endswith("/unit_drill") and env["REDIS_URL"].endswith("/5")
    finally:
        cluster.cleanup()


def test_the_drill_drops_only_a_database_named_for_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="must contain 'drill'"):
        drill.Cluster("postgres://postgres@127.0.0.1:5432/spectacular", log_dir=tmp_path)


async def test_a_connected_seat_whose_view_stays_behind_its_opponents_is_stuck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A push the seat never got: the opponent saw version 9, the seat still shows 8."""
    monkeypatch.setattr(drill, "STUCK_S", 0.3)
    rec = bots.Recorder()
    table = _table(rec)
    table.status = "playing"
    table.bots = []
    for seat, version in ((0, 9), (1, 8)):
        bot: Any = SimpleNamespace(seat=seat, seen=_seen(version, [1, 1], None))
        bot.connected = asyncio.Event()
        bot.connected.set()
        table.bots.append(bot)
    d = drill.Drill.__new__(drill.Drill)
    d.rec, d.fleet = rec, SimpleNamespace(tables=[table])  # type: ignore[assignment]
    watching = asyncio.ensure_future(d.watch())
    try:
        assert await bots.wait_until(lambda: bool(rec.stuck), 5.0, every=0.05)
    finally:
        watching.cancel()
    (since, match, seat, saw, top) = rec.stuck[0]
    assert (match, seat, saw, top) == (7, 1, 8, 9) and len(rec.stuck) == 1
    r = drill.row(_window(t0=since - 1, t1=since + 1), rec, drill.Log({}, {}, []))
    assert r["stuck"] == 1 and drill.broken(r) == ["1 seats stuck on an old view"]


def test_credits_of_one_match_are_twice_only_where_their_given_spans_overlap() -> None:
    outage = {"ms": 4_000, "to": 10_000}  # 6_000 → 10_000
    assert (
        drill.given_twice([(1, outage), (1, {"ms": 2_000, "to": 12_000, "rejoin": True})]) == set()
    )
    assert drill.given_twice([(1, outage), (1, {"ms": 3_000, "to": 12_000})]) == {1}
    # Another match's span, or a credit of nothing, is never "twice".
    assert (
        drill.given_twice(
            [(1, outage), (2, {"ms": 4_000, "to": 10_000}), (1, {"ms": 0, "to": 9_000})]
        )
        == set()
    )


def test_the_loop_lateness_between_two_scrapes_counts_the_ticks_late_past_250_ms() -> None:
    from loadtest.run import late_ticks

    inf = float("inf")
    before = {0.05: 100.0, 0.1: 100.0, 0.25: 100.0, 0.5: 100.0, 1.0: 100.0, inf: 100.0}
    after = {0.05: 1_090.0, 0.1: 1_095.0, 0.25: 1_097.0, 0.5: 1_099.0, 1.0: 1_100.0, inf: 1_100.0}
    assert late_ticks(before, after) == {"ticks": 1_000, "over_250ms": 3, "worst_le_s": 1.0}
    calm = {le: v + 10 for le, v in before.items()}  # 10 ticks, all on time
    assert late_ticks(before, calm) == {"ticks": 10, "over_250ms": 0, "worst_le_s": 0.05}


def test_a_moves_stages_in_a_window_are_the_difference_of_two_scrapes() -> None:
    from loadtest.report import stage_figures, stage_line

    inf = float("inf")
    before = {"locked": {0.001: 500.0, 0.005: 500.0, 0.01: 500.0, inf: 500.0}}
    after = {
        # 100 in the window: 40 under 1 ms, 59 more under 5 ms, the last under 10 ms.
        "locked": {0.001: 540.0, 0.005: 599.0, 0.01: 600.0, inf: 600.0},
        # All of them past the last bucket: told as such, not as a bound.
        "published": {0.001: 0.0, 0.005: 0.0, 0.01: 0.0, inf: 7.0},
        "taken": {0.001: 3.0, inf: 3.0},  # nothing in the window (before: none) ...
    }
    figures = stage_figures({**before, "taken": {0.001: 3.0, inf: 3.0}}, after)
    assert figures == {
        "locked": {"n": 100, "p50_le_ms": 5.0, "p99_le_ms": 5.0},
        "published": {"n": 7, "p50_le_ms": None, "p99_le_ms": None},
    }
    assert stage_line(figures) == "locked ≤5.0/≤5.0 · published >2500/>2500"
    after["locked"][0.001] = 599.0  # 99 of the 100 under 1 ms: the p99 too
    assert stage_figures(before, after)["locked"] == {"n": 100, "p50_le_ms": 1.0, "p99_le_ms": 1.0}


def test_an_idle_moves_stages_are_the_mean_of_the_difference_of_two_scrapes() -> None:
    from loadtest.report import stage_means

    before = {"locked": (0.5, 100.0), "committed": (1.0, 100.0), "taken": (0.01, 100.0)}
    after = {
        "locked": (0.8, 200.0),  # 100 more taking 0.3 s: 3 ms each
        "committed": (1.15, 150.0),  # 50 more taking 0.15 s: 3 ms each
        "taken": (0.01, 100.0),  # none in between: left out
        "published": (0.002, 4.0),  # new since the first scrape: 0.5 ms each
    }
    # In the stages' order, whatever order the scrape gave them in.
    assert list(stage_means(before, after).items()) == [
        ("locked", 3.0),
        ("committed", 3.0),
        ("published", 0.5),
    ]


def test_the_stages_sums_and_counts_are_scraped_from_every_web_process() -> None:
    import http.server
    import threading

    from loadtest.run import scrape_means

    pages = [
        b'sb_move_stage_seconds_sum{stage="locked"} 0.25\n'
        b'sb_move_stage_seconds_count{stage="locked"} 100.0\n',
        b'sb_move_stage_seconds_sum{stage="locked"} 0.75\n'
        b'sb_move_stage_seconds_count{stage="locked"} 50.0\n'
        b'sb_move_stage_seconds_sum{stage="taken"} 0.5\n'
        b'sb_move_stage_seconds_count{stage="taken"} 150.0\n',
    ]
    asked: list[str] = []

    def server(page: bytes) -> http.server.ThreadingHTTPServer:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked.append(self.path)
                head = b"# TYPE sb_move_stage_seconds histogram\n"
                self.send_response(200)
                self.end_headers()
                self.wfile.write(head + page)

            def log_message(self, *args: object) -> None:
                pass

        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        return s

    servers = [server(p) for p in pages]
    try:
        ports = [s.server_address[1] for s in servers]
        got = scrape_means(ports, "sb_move_stage_seconds")
        assert got == {"locked": (1.0, 150.0), "taken": (0.5, 150.0)}
        assert all("sb_move_stage_seconds_sum" in a and "_count" in a for a in asked)
        servers[1].shutdown()
        servers[1].server_close()
        assert scrape_means(ports, "sb_move_stage_seconds") is None  # one did not answer
        assert scrape_means([], "sb_move_stage_seconds") is None
    finally:
        servers[0].shutdown()
        servers[0].server_close()


# --- when a move counts as arrived (Table.on_state) ----------------------------------


def _move(version: int) -> bots.Move:
    return bots.Move("place", 7, 0, False, version, 10.0, 9.0, 1.0, 60_000, 0)


def test_a_credit_only_frame_leaves_a_move_on_its_way_and_the_move_ends_it() -> None:
    """After our outage the time given back is a change of its own: reaching the opponent
    while a move is on its way, it is not the move and does not end its latency."""
    rec = bots.Recorder()
    table = _table(rec)
    opponent: Any = SimpleNamespace(seat=1, html=False)
    move = table.pending[0] = _move(version=5)
    table.on_state(opponent, _seen(6, [60_000, 60_000], 0, [(40, "credit", None)]), at=10.2)
    assert table.pending[0] is move and rec.moves == []
    table.on_state(opponent, _seen(7, [59_000, 60_000], 1, [(41, "place", 0)]), at=10.5)
    assert table.pending[0] is None and rec.moves == [move]
    assert round(move.latency_ms) == 500


def test_a_page_socket_reads_no_events_so_its_first_newer_version_ends_the_move() -> None:
    rec = bots.Recorder()
    table = _table(rec)
    page: Any = SimpleNamespace(seat=1, html=True)
    move = table.pending[0] = _move(version=5)
    table.on_state(page, _seen(6, [60_000, 60_000], 1), at=10.3)
    assert rec.moves == [move] and move.opp_html and round(move.latency_ms) == 300
