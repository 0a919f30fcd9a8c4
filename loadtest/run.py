"""One set-up's whole run: probes, the levels of live matches, idle sockets, or a soak."""

from __future__ import annotations

import asyncio
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import probes, procstat, profile, report
from .bots import Account, Behaviour, Fleet, Recorder, wait_until
from .setups import Setup
from .stalls import Stalls, settle_heap

# The probe match plays fast (a move every ~0.1 s), so a few seconds give many moves,
# yet the server is idle between them.
PROBE_THINK = (0.05, 0.15)
# An idle match's first decision times out 10 s (delay) + 120 s (main time) after
# the start; its window ends before that, so no timeout lands in it.
IDLE_MATCH_LIMIT_S = 125.0
# The echo load (probes.EchoLoad): each pair relays once a second (--echo-pairs 100:
# as many relays a second as 250 matches' bots make moves, on 100 matches' sockets).
ECHO_LOAD_PER_PAIR_S = 1.0
QUIET_CPU_PCT = 15.0  # server CPU (% of a core) under which the server counts as settled
# A level at which fewer than this share of the matches are live, or moves take
# longer than this to arrive, saturated the server: the levels above it would
# only measure the same collapse, at length.
SATURATED = 0.5
COLLAPSED_P50_MS = 1000.0
HANDSHAKES_AT_ONCE = 16  # idle sockets connecting at once while ramping up


@dataclass
class Options:
    setups: list[str] = field(default_factory=lambda: ["embedded", "services"])
    levels: list[int] = field(default_factory=lambda: [50, 200, 500, 1000])
    idle: int = 2000
    window: float = 45.0
    settle: float = 5.0
    ramp: float = 25.0  # new matches per second (idle sockets: twice as many)
    ramp_timeout: float = 90.0
    think: tuple[float, float] = (1.0, 4.0)
    protocol: int = 2  # what the JSON bots speak (docs/protocol.md: 2 is ?v=2, deltas)
    probes: set[str] = field(default_factory=lambda: {"echo", "flood"})
    probe_seconds: float = 15.0
    echo_count: int = 200
    echo_pairs: int = 100
    flood_workers: int = 4
    soak: float = 0.0
    soak_matches: int = 200
    fresh: bool = True
    no_skip: bool = False  # measure the levels above a saturated one all the same
    no_profile: bool = False  # no py-spy during the levels' windows (loadtest/profile.py)
    seed: int | None = None
    log_dir: Path = Path("var")
    json: Path = Path("var/bench-load.json")

    def accounts_needed(self) -> int:
        most = max([*self.levels, self.soak_matches if self.soak else 0, 1])
        echo = 2 * self.echo_pairs if "echo" in self.probes else 2
        return max(2 * most, self.idle, echo) + 4


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Run:
    def __init__(self, setup: Setup, opts: Options, accounts: list[Account]) -> None:
        self.setup = setup
        self.opts = opts
        self.rec = Recorder()
        self.accounts = accounts
        self.fleet: Fleet  # made inside the event loop
        self.stalls = Stalls()  # the harness's own lateness: not the server's (loadtest/stalls.py)

    def snap(self) -> procstat.Snapshot:
        assert self.setup.proc is not None
        return procstat.snapshot([self.setup.proc.pid], self.setup.kinds, time.monotonic())

    async def window(
        self, seconds: float, live: Callable[[], int]
    ) -> tuple[
        float, float, procstat.Usage, list[int], tuple[procstat.Snapshot, procstat.Snapshot]
    ]:
        """Measure for ``seconds``: (t0, t1, usage, live samples once a second, snapshots)."""
        s0 = self.snap()
        end = s0.at + seconds
        samples = []
        while (now := time.monotonic()) < end:
            await asyncio.sleep(min(1.0, end - now))
            samples.append(live())
        s1 = self.snap()
        return s0.at, s1.at, procstat.usage(s0, s1), samples, (s0, s1)

    async def quiet(self, limit_s: float = 30.0) -> None:
        """Wait (at most ``limit_s``) until the server's CPU has fallen back: the work
        left over from one phase must not be measured in the next."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            s0 = self.snap()
            await asyncio.sleep(1.0)
            if procstat.usage(s0, self.snap()).server < QUIET_CPU_PCT:
                return

    async def main(self) -> dict[str, Any]:
        opts = self.opts
        self.fleet = Fleet(
            self.setup.base,
            self.accounts,
            self.rec,
            ramp_per_s=opts.ramp,
            seed=opts.seed,
            protocol=opts.protocol,
        )
        result: dict[str, Any] = {"url": self.setup.base, "probes": {}, "rows": []}
        self.stalls.start()
        try:
            if opts.probes:
                result["probes"] = await self.probes()
            if opts.soak:
                result["soak"] = await self.soak()
                return result
            saturated = None
            for n in opts.levels:
                if saturated is not None and not opts.no_skip:
                    say(f"[{self.setup.name}] {n} matches: skipped ({saturated})")
                    result["rows"].append({"level": f"{n} matches", "skipped": saturated})
                    continue
                row = await self.level(n)
                result["rows"].append(row)
                p50 = row["latency_ms"]["p50"]
                if row["live"] < SATURATED * n:
                    saturated = f"only {row['live']} of {row['target']} matches were live"
                elif p50 is None or p50 > COLLAPSED_P50_MS:
                    saturated = f"at {n} matches a move took {p50 or '∞'} ms to arrive (p50)"
            await self.fleet.stop_all()
            if opts.idle:
                await self.quiet()
                result["rows"].append(await self.idle_lobby(opts.idle))
                await self.quiet()
                result["rows"].append(await self.idle_matches(opts.idle))
        finally:
            await self.stalls.stop()
            await self.fleet.close()
        return result

    # --- live matches ---------------------------------------------------------------

    async def level(self, n: int) -> dict[str, Any]:
        opts = self.opts
        say(f"[{self.setup.name}] {n} matches: ramping up")
        ports = self.setup.metrics_ports
        lag0 = await asyncio.to_thread(loop_lag, ports)
        ramp_s = await self.fleet.scale(n, Behaviour(think=opts.think), opts.ramp_timeout)
        await asyncio.sleep(opts.settle)
        settle_heap()  # the collector's own pause, before the window and not in it
        stages0 = await asyncio.to_thread(scrape, ports, STAGE_METRIC)
        sampler = None
        if not opts.no_profile:
            sampler = profile.Sampler(self.web_pids(), opts.window)
            await sampler.start()
        row, _ = await self.measure(
            f"{n} matches", n, ramp_s, opts.window, self.fleet.live, offered=self.offered(n)
        )
        stages1 = await asyncio.to_thread(scrape, ports, STAGE_METRIC)
        if sampler is not None:
            row["profile"] = await sampler.result()
        if stages0 is not None and stages1 is not None:
            row["server_stages"] = report.stage_figures(stages0, stages1)
        lag1 = await asyncio.to_thread(loop_lag, ports)
        if lag0 is not None and lag1 is not None:
            # The ramp (its burst of handshakes) and the window: ticks late past 250 ms.
            row["loop_late"] = late_ticks(lag0, lag1)
        lat = row["latency_ms"]
        late = row.get("loop_late")
        st = row["harness_stalls"]
        say(
            f"[{self.setup.name}] {n} matches: {row['live']} live, {row['moves_per_s']} moves/s, "
            f"p50 {lat['p50']} ms, p99 {lat['p99']} ms (to the server p99 "
            f"{row['inbound_ms']['p99']} ms, back out p99 {row['outbound_ms']['p99']} ms); "
            f"the harness itself late up to {st['loop_late_max_ms']} ms "
            f"(GC pauses up to {st['gc_pause_max_ms']} ms)"
            + (
                ""
                if late is None
                else f"; event loop late > 250 ms {late['over_250ms']} times of "
                f"{late['ticks']} ticks (worst ≤ {late['worst_le_s']} s), ramp included"
            )
        )
        if row.get("server_stages"):
            say(
                f"[{self.setup.name}] {n} matches: a move in its web process, p50/p99 ms "
                f"(matches/play/stages.py): {report.stage_line(row['server_stages'])}"
            )
        if row.get("profile"):
            for line in profile.lines(row["profile"], row.get("server_cpu_ms_per_move"), None):
                say(f"[{self.setup.name}] {n} matches: {line}")
        return row

    def web_pids(self) -> list[int]:
        """The set-up's web processes now (the embedded default's one, the services' two)."""
        self.snap()  # reads the roles of processes started since
        alive = {p.pid for p in self.setup.processes()}
        return sorted(
            pid for pid, kind in self.setup.kinds.items() if kind == "web" and pid in alive
        )

    def offered(self, matches: int) -> float:
        """Moves a second the bots ask for: one decision per match per mean think time."""
        return matches / (sum(self.opts.think) / 2)

    async def measure(
        self,
        label: str,
        target: int,
        ramp_s: float,
        seconds: float,
        live: Callable[[], int],
        offered: float | None = None,
    ) -> tuple[dict[str, Any], tuple[procstat.Snapshot, procstat.Snapshot]]:
        """A level's row over a window of ``seconds``, and the window's end snapshots."""
        say(f"[{self.setup.name}] {label}: measuring {seconds:.0f} s")
        t0, t1, u, samples, snaps = await self.window(seconds, live)
        row = report.level_row(
            label,
            self.rec.between(t0, t1),
            u,
            target=target,
            live=samples,
            ramp_s=ramp_s,
            offered=offered,
        )
        row["harness_stalls"] = self.stalls.between(t0, t1)
        return row, snaps

    async def soak(self) -> dict[str, Any]:
        opts = self.opts
        n = opts.soak_matches
        say(f"[{self.setup.name}] soak: ramping up to {n} matches")
        ramp_s = await self.fleet.scale(n, Behaviour(think=opts.think), opts.ramp_timeout)
        await asyncio.sleep(opts.settle)
        row, (start, end) = await self.measure(
            f"soak {n} matches", n, ramp_s, opts.soak, self.fleet.live, offered=self.offered(n)
        )
        a, b = procstat.rss_by_process(start), procstat.rss_by_process(end)
        row["seconds"] = row["window_s"]
        row["matches"] = n
        row["rss_mb"] = {name: (a.get(name), b.get(name)) for name in sorted({*a, *b})}
        return row

    # --- probes -------------------------------------------------------------------------

    async def probes(self) -> dict[str, Any]:
        opts, fleet = self.opts, self.fleet
        out: dict[str, Any] = {}
        if "echo" in opts.probes:
            say(f"[{self.setup.name}] echo baseline")
            a, b = fleet.take(2)
            try:
                times = await probes.echo(fleet.ws, self.setup.base, a, b, opts.echo_count)
            finally:
                fleet.free.extend([a, b])
            out["echo"] = report.summary(times)
            if opts.echo_pairs:
                out["echo_load"] = await self.echo_load(opts.echo_pairs)
        say(f"[{self.setup.name}] one match on an idle server")
        table = fleet.add(Behaviour(think=PROBE_THINK))
        try:
            await wait_until(lambda: bool(table.first_live), opts.ramp_timeout)
            await asyncio.sleep(1.0)  # past the start
            ports = self.setup.metrics_ports
            means0 = await asyncio.to_thread(scrape_means, ports, STAGE_METRIC)
            idle_moves = await self._moves(opts.probe_seconds)
            means1 = await asyncio.to_thread(scrape_means, ports, STAGE_METRIC)
            idle = [m.latency_ms for m in idle_moves]
            out["idle_move"] = {**report.summary(idle), **report.move_split(idle_moves)}
            if means0 is not None and means1 is not None:
                out["idle_move"]["server_stages_mean_ms"] = report.stage_means(means0, means1)
            url = self.setup.env.get("DATABASE_URL", "")
            if url.startswith(("postgres://", "postgresql://")):
                commits = await asyncio.to_thread(probes.durable_commit, url)
                out["durable_commit"] = report.summary(commits)
            if "flood" in opts.probes:
                say(f"[{self.setup.name}] the same match during a login flood")
                stop = asyncio.Event()
                flood = asyncio.ensure_future(
                    probes.login_flood(
                        fleet.http,
                        self.setup.base,
                        table.accounts[0].username,
                        opts.flood_workers,
                        stop,
                    )
                )
                t0 = time.monotonic()
                during = await self._latencies(opts.probe_seconds)
                stop.set()
                statuses = await flood
                secs = time.monotonic() - t0
                logins = sum(statuses.values())
                idle_p50, flood_p50 = report.pct(idle, 50), report.pct(during, 50)
                out["flood"] = {
                    "workers": opts.flood_workers,
                    "logins": logins,
                    "logins_per_s": round(logins / secs, 1),
                    "statuses": {str(k): v for k, v in statuses.items()},
                    "idle_p50": idle_p50,
                    "flood_p50": flood_p50,
                    "flood_p99": report.pct(during, 99),
                    "flood_moves": len(during),
                    "ratio": flood_p50 / idle_p50 if idle_p50 and flood_p50 else None,
                }
        finally:
            await table.stop()
            fleet.tables.remove(table)
            fleet.free.extend(table.accounts)
        return out

    async def echo_load(self, pairs: int) -> dict[str, Any]:
        """The server's CPU per echo relay at a move load's rate (probes.EchoLoad), the
        CPU of the same open sockets left idle for as long taken off first."""
        opts, fleet = self.opts, self.fleet
        per_s = pairs * ECHO_LOAD_PER_PAIR_S
        say(f"[{self.setup.name}] {pairs} echo pairs, {per_s:.0f} relays a second")
        accounts = fleet.take(2 * pairs)
        load = probes.EchoLoad(
            fleet.ws, self.setup.base, list(zip(accounts[::2], accounts[1::2], strict=True))
        )
        try:
            await load.connect()
            await self.quiet()
            s0 = self.snap()
            await asyncio.sleep(opts.probe_seconds / 3)
            idle = procstat.usage(s0, self.snap())
            load.start(per_s)
            await asyncio.sleep(1.0)  # past every pair's first phase
            load.received = 0
            s0 = self.snap()
            await asyncio.sleep(opts.probe_seconds)
            relays = load.received
            busy = procstat.usage(s0, self.snap())
        finally:
            await load.stop()
            fleet.free.extend(accounts)
        # The idle sockets' and the background's share (sweeper, beats) taken off.
        cpu_s = max(0.0, busy.server_cpu_s - idle.server_cpu_s / idle.seconds * busy.seconds)
        return {
            "pairs": pairs,
            "relays": relays,
            "relays_per_s": round(relays / busy.seconds, 1),
            "server_cpu_ms_per_relay": round(cpu_s * 1000 / relays, 3) if relays else None,
            "idle_server_pct": round(idle.server, 1),
            "busy_server_pct": round(busy.server, 1),
            "busy_by_kind_pct": {k: round(v, 1) for k, v in busy.by_kind.items()},
        }

    async def _moves(self, seconds: float) -> list[Any]:
        t0 = time.monotonic()
        await asyncio.sleep(seconds)
        return list(self.rec.between(t0, time.monotonic())["moves"])

    async def _latencies(self, seconds: float) -> list[float]:
        return [m.latency_ms for m in await self._moves(seconds)]

    # --- idle sockets -------------------------------------------------------------------

    async def idle_lobby(self, n: int) -> dict[str, Any]:
        fleet, opts = self.fleet, self.opts
        say(f"[{self.setup.name}] {n} idle lobby sockets: connecting")
        t0 = time.monotonic()
        sockets = []
        gap = 1.0 / (2 * opts.ramp)
        deadline = t0 + opts.ramp_timeout
        accounts = fleet.take(n)
        for i, acct in enumerate(accounts):
            # As with matches: no more than a few handshakes waiting at once, and
            # no more sockets than the ramp's time allows.
            if not await wait_until(
                lambda: sum(1 for s in sockets if not s.connected) < HANDSHAKES_AT_ONCE,
                deadline - time.monotonic(),
            ):
                fleet.free.extend(accounts[i:])
                break
            s = probes.LobbySocket(fleet.ws, self.setup.base, acct, self.rec)
            s.start()
            sockets.append(s)
            await asyncio.sleep(gap)
        try:
            await wait_until(lambda: all(s.connected for s in sockets), deadline - time.monotonic())
            ramp_s = time.monotonic() - t0
            await asyncio.sleep(opts.settle)
            row, _ = await self.measure(
                f"{n} lobby sockets",
                n,
                ramp_s,
                opts.window,
                lambda: sum(1 for s in sockets if s.connected),
            )
        finally:
            await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)
            fleet.free.extend(s.acct for s in sockets)
        return row

    async def idle_matches(self, n: int) -> dict[str, Any]:
        fleet, opts = self.fleet, self.opts
        say(f"[{self.setup.name}] {n} idle match sockets: making {n // 2} matches")
        idle = Behaviour(think=opts.think, play=False, replace=False)
        try:
            ramp_s = await fleet.scale(n // 2, idle, opts.ramp_timeout)
            await asyncio.sleep(opts.settle)
            firsts = [t.first_live for t in fleet.tables if t.first_live]
            limit = min(firsts, default=time.monotonic()) + IDLE_MATCH_LIMIT_S - time.monotonic()
            seconds = max(1.0, min(opts.window, limit))
            row, _ = await self.measure(
                f"{n} match sockets", n, ramp_s, seconds, lambda: 2 * fleet.live()
            )
        finally:
            await fleet.stop_all()
        return row


LATE_S = 0.25  # the embedded default's goal: its loop never stalls longer (issue 14)


STAGE_METRIC = "sb_move_stage_seconds"
SCRAPE_TIMEOUT_S = 15.0


def _samples(ports: list[int], metric: str, parts: tuple[str, ...]) -> list[Any] | None:
    """The samples of histogram ``metric``'s ``parts`` (``_bucket``, ``_sum``, …) from
    every web process's metrics. ``None`` if there are none or one did not answer."""
    from prometheus_client.parser import text_string_to_metric_families

    if not ports:
        return None
    # Only these series (prometheus-client's name[] filter): the whole page reads the
    # database too, and a saturated process did not answer it within 5 s.
    query = "&".join(f"name[]={metric}{part}" for part in parts)
    out = []
    for port in ports:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/metrics?{query}", timeout=SCRAPE_TIMEOUT_S
            ) as r:
                text = r.read().decode()
        except OSError:
            return None
        for family in text_string_to_metric_families(text):
            if family.name == metric:
                out.extend(s for s in family.samples if s.name.endswith(parts))
    return out


def scrape(ports: list[int], metric: str) -> dict[str, dict[float, float]] | None:
    """A histogram of the web processes' metrics, summed over them: for each value of
    its one label (``""`` if none), le → count. ``None`` if a process did not answer."""
    samples = _samples(ports, metric, ("_bucket",))
    if samples is None:
        return None
    out: dict[str, dict[float, float]] = {}
    for sample in samples:
        labels = {k: v for k, v in sample.labels.items() if k != "le"}
        key = next(iter(labels.values()), "")
        le = float(sample.labels["le"])
        buckets = out.setdefault(key, {})
        buckets[le] = buckets.get(le, 0.0) + sample.value
    return out


def scrape_means(ports: list[int], metric: str) -> dict[str, tuple[float, float]] | None:
    """A histogram's sum and count per value of its one label, summed over the web
    processes. ``None`` if a process did not answer."""
    samples = _samples(ports, metric, ("_sum", "_count"))
    if samples is None:
        return None
    out: dict[str, tuple[float, float]] = {}
    for sample in samples:
        key = next(iter(sample.labels.values()), "")
        total, n = out.get(key, (0.0, 0.0))
        if sample.name.endswith("_sum"):
            out[key] = (total + sample.value, n)
        else:
            out[key] = (total, n + sample.value)
    return out


def loop_lag(ports: list[int]) -> dict[float, float] | None:
    """The web processes' loop-lateness histogram (``sb_loop_lag_seconds``): le → count."""
    found = scrape(ports, "sb_loop_lag_seconds")
    return (found or {}).get("") or None


def late_ticks(before: dict[float, float], after: dict[float, float]) -> dict[str, Any]:
    """Between two scrapes: ticks, how many were late past :data:`LATE_S`, the worst bucket."""
    delta = {le: after.get(le, 0) - before.get(le, 0) for le in after}
    total = delta.get(float("inf"), 0)
    within = max((v for le, v in delta.items() if le <= LATE_S), default=0)
    worst = min((le for le, v in delta.items() if v >= total), default=float("inf"))
    return {
        "ticks": int(total),
        "over_250ms": int(total - within),
        "worst_le_s": "∞" if worst == float("inf") else worst,
    }
