"""``make drill`` (``python -m loadtest.drill``): kill server processes while bots play.

The services set-up is started as ``make run-services`` starts it, but each
process type on its own (honcho stops everything when one process exits, so it
cannot kill one type): :class:`Cluster` reads the ``Procfile``, runs ``release``
once, then starts every other type with the Procfile's command and the
environment ``make run-services`` gives it (``SB_HOST``, ``SB_PORT``,
``WEB1_PORT``, ``WEB2_PORT``, ``DATABASE_URL``, ``REDIS_URL``, ``PATH`` with the
venv, and ``PORT`` as honcho sets it), each through ``/bin/sh -c`` in a process
group of its own, so that one type can be sent SIGTERM or SIGKILL and started
again. It runs on a database of its own (``spectacular_drill``, dropped first)
and a Redis database of its own (5, emptied first); PostgreSQL and Redis
themselves are never stopped.

Bots (:mod:`loadtest.bots`) play N live matches through HAProxy the whole time,
reconnecting by themselves. After a baseline window with no fault, each fault in
turn, with SIGTERM and then with SIGKILL: signal the process group(s), wait
until they are gone, leave them down a few seconds, start them again, wait until
they are healthy and every socket is back, let play go on a few seconds.

Each window (a fault until the next one) becomes a row (:func:`row`): matches
live, moves the seats saw applied and how many of them the server's event log
lacks afterwards, main time charged to players beyond their own thinking, what
the server gave back (``credit`` events), voided matches and whether each was
justified (only an outage of the whole tier over three minutes is), sockets
dropped and the time until every one was back, errors by code.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import procstat, report
from .bots import Account, Behaviour, Fleet, Recorder, wait_until
from .setups import ROOT, START_TIMEOUT_S, STOP_TIMEOUT_S, Services, free_ports, pg_params

DRILL_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/spectacular_drill"
DRILL_REDIS_URL = "redis://127.0.0.1:6379/5"
RELEASE = "release"  # the Procfile's one-off step, run before the others start
EXIT_TIMEOUT_S = 15.0  # a SIGTERM'd process must be gone by then (config.serve: 10 s)
DIAGNOSE_AFTER_S = 30.0  # a restarted process not healthy by then: its stacks are dumped
BACK_TIMEOUT_S = 60.0  # after the restart, for every socket to be back
STUCK_S = 5.0  # a connected seat whose view lags its opponent's this long missed a push
OUTAGE_VOID_AFTER_S = 180.0  # matches.clock.outage.OUTAGE_VOID_AFTER_MS: the one cause of a void
# The players' own actions in the event log (the server's forced ones included).
MOVE_KINDS = ("place", "bid", "accept", "decline")
SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL}


def say(text: str) -> None:
    print(f"[drill] {text}", file=sys.stderr, flush=True)


def read_procfile(path: Path) -> dict[str, str]:
    """``name: command`` lines, in order (comments and blank lines skipped)."""
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, cmd = line.partition(":")
            out[name.strip()] = cmd.strip()
    return out


def established(port: int) -> int:
    """TCP connections established to local ``port`` (from /proc/net/tcp, Linux)."""
    n = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(path) as f:
            next(f)  # the header
            for line in f:
                fields = line.split()
                n += fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port
    return n


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            r.read()
            return bool(r.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@dataclass(frozen=True)
class Target:
    """What one fault hits: Procfile process types, signalled together."""

    name: str  # as given on the command line
    label: str
    types: tuple[str, ...]
    tier: bool  # nobody can reach the web tier while it is down (all web, the proxy)


def targets(roles: dict[str, str]) -> dict[str, Target]:
    """The faults a Procfile allows, by name: one web process, all of them, each other role."""
    web = tuple(t for t, role in roles.items() if role == "web")
    out = {}
    if web:
        # Which one is hit is chosen then: the one holding the most connections.
        out["one-web"] = Target("one-web", f"one web process of {len(web)}", web, len(web) == 1)
    if len(web) > 1:
        out["all-web"] = Target("all-web", f"all {len(web)} web processes", web, True)
    for role, label in (("worker", "the worker"), ("beat", "beat"), ("proxy", "the proxy")):
        types = tuple(t for t, r in roles.items() if r == role)
        if types:
            out[role] = Target(role, label, types, role == "proxy")
    return out


class Cluster(Services):
    """The services set-up with each Procfile process type in a process group of its own."""

    name = "drill"

    def __init__(
        self,
        database_url: str = DRILL_DATABASE_URL,
        redis_url: str = DRILL_REDIS_URL,
        *,
        prefix: str = "",
        log_dir: Path = Path("var"),
    ) -> None:
        db_name, _ = pg_params(database_url)
        if "drill" not in db_name:
            raise SystemExit(
                f"the drill drops its database first: {db_name!r} must contain 'drill'"
            )
        super().__init__(database_url, redis_url, log_dir=log_dir)
        self.port = free_ports(3)
        self.base = f"http://{self.host}:{self.port}"
        self.log_dir = log_dir
        self.prefix = prefix  # Redis keys apart (then the Redis database is not emptied)
        self.env.pop("BENCH_ECHO", None)
        # What `make run-services` exports to honcho.
        self.env.update(
            PORT=str(self.port),
            SB_HOST=self.host,
            SB_PORT=str(self.port),
            WEB1_PORT=str(self.port + 1),
            WEB2_PORT=str(self.port + 2),
            PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}",
        )
        if prefix:
            self.env.update(CHANNEL_LAYER_PREFIX=prefix, LIVENESS_PREFIX=prefix)
        self.procfile = read_procfile(ROOT / "Procfile")
        self.types = [t for t in self.procfile if t != RELEASE]
        self.roles = {t: procstat.kind_of(self.procfile[t]) for t in self.types}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.since: dict[str, tuple[float, int]] = {}  # type → (wall time started, log offset)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for t in [RELEASE, *self.types]:
            self.log(t).write_bytes(b"")
        self.log_path = self.log(self.types[0])

    def log(self, t: str) -> Path:
        return self.log_dir / f"drill-{t}.log"

    def type_env(self, t: str) -> dict[str, str]:
        """As honcho gives it: ``PORT`` 100 apart per type, and the process's name."""
        i = self.types.index(t) if t in self.types else 0
        return {**self.env, "PORT": str(self.port + 100 * i), "HONCHO_PROCESS_NAME": f"{t}.1"}

    # --- life cycle ---------------------------------------------------------------------

    def prepare(self) -> None:
        self.drop_database()
        if not self.prefix:
            self.flush_redis()

    def start(self) -> None:
        self.prepare()
        subprocess.run(["bash", "scripts/ensure-programs.sh", "services"], cwd=ROOT, check=True)
        self.start_type(RELEASE)
        if self.procs.pop(RELEASE).wait(timeout=START_TIMEOUT_S):
            raise RuntimeError(f"release failed: {self.tail(RELEASE)}")
        for t in self.types:
            self.start_type(t)
        deadline = time.monotonic() + START_TIMEOUT_S
        for t in self.types:
            while not self.healthy(t):
                if time.monotonic() > deadline or not self.alive(t):
                    self.stop()
                    raise RuntimeError(f"{t} did not start; its log ends:\n{self.tail(t)}")
                time.sleep(0.2)

    def start_type(self, t: str) -> None:
        log_path = self.log(t)
        offset = log_path.stat().st_size if log_path.exists() else 0
        with log_path.open("ab") as log:
            self.procs[t] = subprocess.Popen(
                ["/bin/sh", "-c", self.procfile[t]],
                cwd=ROOT,
                env=self.type_env(t),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.since[t] = (time.time(), offset)

    def kill(self, t: str, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.procs[t].pid, sig)

    def diagnose(self, t: str) -> Path:
        """Every thread's stack of the type's processes (py-spy), appended to its log."""
        path = self.log(t)
        proc = self.procs.get(t)
        pids = [p.pid for p in procstat.group(proc.pid)] if proc is not None else []
        spy = Path(sys.executable).with_name("py-spy")
        with path.open("a") as log:
            log.write(f"\n--- drill: not healthy; stacks of {pids} ---\n")
            log.flush()
            for pid in pids:
                subprocess.run([str(spy), "dump", "--pid", str(pid)], stdout=log,
                               stderr=subprocess.STDOUT, timeout=30, check=False)  # fmt: skip
        return path

    def alive(self, t: str) -> bool:
        """Some process of the type's group is still running."""
        proc = self.procs.get(t)
        if proc is None:
            return False
        proc.poll()  # reap the shell
        return bool(procstat.group(proc.pid))

    def stop(self) -> None:
        for t in self.procs:
            self.kill(t, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while any(self.alive(t) for t in self.procs) and time.monotonic() < deadline:
            time.sleep(0.2)
        for t in self.procs:
            self.kill(t, signal.SIGKILL)
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self.procs = {}
        if self.prefix:
            self.drop_prefixed_keys()
        self.cleanup()

    def drop_prefixed_keys(self) -> None:
        """A shared Redis database: leave none of this run's keys behind."""
        import redis

        client = redis.Redis.from_url(self.env["REDIS_URL"])
        try:
            for key in client.scan_iter(match=f"{self.prefix}*", count=1000):
                client.delete(key)
        finally:
            client.close()

    def processes(self) -> list[procstat.Proc]:
        return [p for proc in self.procs.values() for p in procstat.group(proc.pid)]

    # --- health -------------------------------------------------------------------------

    def healthy(self, t: str) -> bool:
        """The type does its job again: a web process and the proxy serve a page, the
        worker's sweeper has beaten since it started, beat has started its scheduler."""
        if not self.alive(t):
            return False
        role = self.roles[t]
        if role == "web":
            return http_ok(f"http://127.0.0.1:{self.web_port(t)}/accounts/login/")
        if role == "proxy":
            return http_ok(self.base + "/accounts/login/")
        if role == "worker":
            return self.sweeper_beat_since(self.since[t][0])
        if role == "beat":
            return "beat: Starting" in self.log_since(t)
        return time.time() - self.since[t][0] > 2.0

    def web_port(self, t: str) -> int:
        m = re.search(r'--port\s+"?\$\{?(\w+)', self.procfile[t])
        if m is None:
            raise RuntimeError(f"cannot tell the port of {t}: {self.procfile[t]}")
        return int(self.env[m.group(1)])

    def sweeper_beat_since(self, wall: float) -> bool:
        import psycopg

        name, params = pg_params(self.env["DATABASE_URL"])
        try:
            with psycopg.connect(dbname=name, connect_timeout=2, **params) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM matches_heartbeat "
                    "WHERE kind = 'worker' AND last_beat > %s",
                    [datetime.fromtimestamp(wall, UTC)],
                ).fetchone()
        except psycopg.Error:
            return False
        return bool(row and row[0])

    def log_since(self, t: str) -> str:
        with self.log(t).open("rb") as f:
            f.seek(self.since[t][1])
            return f.read().decode(errors="replace")

    def tail(self, t: str, lines: int = 30) -> str:
        text = self.log(t).read_text(errors="replace") if self.log(t).exists() else ""
        return "\n".join(text.splitlines()[-lines:])


# --- the drill ------------------------------------------------------------------------------


@dataclass
class Options:
    matches: int = 40
    think: tuple[float, float] = (1.0, 4.0)
    faults: list[str] = field(
        default_factory=lambda: ["one-web", "all-web", "worker", "beat", "proxy"]
    )
    signals: list[str] = field(default_factory=lambda: ["TERM", "KILL"])
    down: float = 4.0  # s a process stays down before it is started again
    settle: float = 8.0  # s of play after every socket is back, before the next fault
    baseline: float = 15.0  # s of play with no fault first
    database_url: str = DRILL_DATABASE_URL
    redis_url: str = DRILL_REDIS_URL
    prefix: str = ""
    seed: int | None = None
    log_dir: Path = Path("var")
    json: Path = Path("var/drill.json")


@dataclass
class Window:
    """One fault (or the baseline), from its signal to the next fault."""

    label: str
    t0: float  # monotonic s: the signal
    wall0: float  # the same moment, epoch s
    live: int  # matches live at the signal
    tier: bool = False  # the fault took the whole web tier out of reach
    hit: list[str] = field(default_factory=list)  # the process types signalled
    t1: float = 0.0
    wall1: float = 0.0
    exit_s: float | None = None  # signal → every process of the group gone
    killed: bool = False  # SIGTERM did not end it within EXIT_TIMEOUT_S: SIGKILL then
    healthy_s: float | None = None  # signal → started again and healthy
    back_s: float | None = 0.0  # signal → every dropped socket reconnected, with state
    not_back: int = 0  # sockets still not back after BACK_TIMEOUT_S


class Drill:
    def __init__(self, cluster: Cluster, opts: Options, accounts: list[Account]) -> None:
        self.cluster = cluster
        self.opts = opts
        self.accounts = accounts
        self.rec = Recorder()
        self.fleet: Fleet  # made inside the event loop

    async def run(self) -> list[Window]:
        o = self.opts
        self.fleet = Fleet(self.cluster.base, self.accounts, self.rec, seed=o.seed)
        windows: list[Window] = []
        watching = None
        try:
            say(f"{o.matches} matches: ramping up")
            await self.fleet.scale(o.matches, Behaviour(think=o.think), START_TIMEOUT_S)
            watching = asyncio.ensure_future(self.watch())
            await asyncio.sleep(o.settle)
            say(f"baseline: {o.baseline:.0f} s with no fault")
            windows.append(self.window("baseline (no fault)"))
            await asyncio.sleep(o.baseline)
            faults = targets(self.cluster.roles)
            for name in o.faults:
                for sig in o.signals:
                    windows.append(await self.fault(faults[name], sig))
        finally:
            if watching is not None:
                watching.cancel()
            end, wall = time.monotonic(), time.time()
            for w, nxt in zip(windows, windows[1:], strict=False):
                w.t1, w.wall1 = nxt.t0, nxt.wall0
            if windows:
                windows[-1].t1, windows[-1].wall1 = end, wall
            await self.fleet.close()
        return windows

    async def watch(self) -> None:
        """Note every seat whose connected socket shows an older version than its
        opponent's for :data:`STUCK_S`: it was never sent a change (a lost push),
        and will wait for it, its clock perhaps running, until something else moves."""
        behind: dict[tuple[int, int], float] = {}  # (match, seat) → lagging since
        while True:
            now = time.monotonic()
            for t in self.fleet.tables:
                if t.status != "playing" or not all(b.seen for b in t.bots):
                    continue
                top = max(b.seen.version for b in t.bots if b.seen)
                for b in t.bots:
                    key, seen = (t.match_id, b.seat), b.seen
                    if seen is None or seen.version >= top or not b.connected.is_set():
                        behind.pop(key, None)
                        continue
                    since = behind.setdefault(key, now)
                    if now - since >= STUCK_S and since > 0:
                        self.rec.stuck.append((since, *key, seen.version, top))
                        behind[key] = -1.0  # once per episode
            await asyncio.sleep(0.5)

    def window(self, label: str) -> Window:
        return Window(label, time.monotonic(), time.time(), self.fleet.live())

    def not_back(self) -> int:
        """Sockets of matches being played that are not connected with their state."""
        return sum(
            not b.connected.is_set()
            for t in self.fleet.tables
            if t.status == "playing"
            for b in t.bots
        )

    async def fault(self, target: Target, sig: str) -> Window:
        c = self.cluster
        types = target.types
        if target.name == "one-web":
            types = (max(types, key=lambda t: established(c.web_port(t))),)
        w = self.window(f"{target.label} · SIG{sig}")
        w.tier, w.hit = target.tier, list(types)
        say(f"{w.label} ({', '.join(types)}): {w.live} matches live")
        for t in types:
            c.kill(t, SIGNALS[sig])
        gone = await wait_until(lambda: not any(c.alive(t) for t in types), EXIT_TIMEOUT_S)
        if not gone:
            w.killed = True
            say(f"{w.label}: still running after {EXIT_TIMEOUT_S:.0f} s: SIGKILL")
            for t in types:
                c.kill(t, signal.SIGKILL)
            await wait_until(lambda: not any(c.alive(t) for t in types), EXIT_TIMEOUT_S)
        w.exit_s = time.monotonic() - w.t0
        await asyncio.sleep(self.opts.down)
        for t in types:
            c.start_type(t)
        if await self.until_healthy(types):
            w.healthy_s = time.monotonic() - w.t0
        else:
            say(f"{w.label}: not healthy after {START_TIMEOUT_S} s")
        if await wait_until(lambda: not self.not_back(), BACK_TIMEOUT_S, every=0.1):
            w.back_s = max((t for t, _, _ in self.rec.reconnects if t >= w.t0), default=w.t0) - w.t0
        else:
            w.back_s, w.not_back = None, self.not_back()
        say(
            f"{w.label}: gone after {w.exit_s:.1f} s, healthy after {w.healthy_s or 0:.1f} s, "
            f"sockets back after {'—' if w.back_s is None else f'{w.back_s:.1f}'} s"
        )
        await asyncio.sleep(self.opts.settle)
        return w

    async def until_healthy(self, types: tuple[str, ...]) -> bool:
        start = time.monotonic()
        deadline = start + START_TIMEOUT_S
        for t in types:
            diagnosed = False
            while not await asyncio.to_thread(self.cluster.healthy, t):
                if time.monotonic() > deadline:
                    return False
                if not diagnosed and time.monotonic() - start > DIAGNOSE_AFTER_S:
                    diagnosed = True  # once: what its threads were doing, in its log
                    path = await asyncio.to_thread(self.cluster.diagnose, t)
                    say(f"{t} not healthy after {DIAGNOSE_AFTER_S:.0f} s: stacks in {path}")
                await asyncio.sleep(0.2)
        return True


# --- the server's log, and the rows ------------------------------------------------------


@dataclass
class Log:
    """What the server's database holds about the bots' matches at the end."""

    versions: dict[int, int]  # match → version
    events: dict[tuple[int, int], tuple[str, int | None]]  # (match, seq) → (type, player)
    platform: list[tuple[int, str, dict[str, Any], int]]  # (match, kind, data, at_ms)


def read_log(database_url: str, match_ids: list[int]) -> Log:
    import psycopg

    name, params = pg_params(database_url)
    with psycopg.connect(dbname=name, **params) as conn:
        versions = dict(
            conn.execute(
                "SELECT id, version FROM matches_match WHERE id = ANY(%s)", [match_ids]
            ).fetchall()
        )
        rows = conn.execute(
            "SELECT match_id, kind, data, at_ms FROM matches_matchevent "
            "WHERE match_id = ANY(%s) ORDER BY id",
            [match_ids],
        ).fetchall()
    events = {}
    platform = []
    for match_id, kind, data, at_ms in rows:
        if "seq" in data:
            events[(match_id, int(data["seq"]))] = (kind, data.get("player"))
        if kind in ("credit", "voided", "timeout", "aborted"):
            platform.append((match_id, kind, data, at_ms))
    return Log(versions, events, platform)


def back_quantiles(w: Window, rec: Recorder) -> dict[str, float] | None:
    """p10/p50/p90/max of the reconnections after a fault's signal, in s after it."""
    back = sorted(t - w.t0 for t, _, _ in rec.reconnects if w.t0 <= t < w.t1)
    if not back:
        return None
    at = {q: back[min(len(back) - 1, int(q / 100 * len(back)))] for q in (10, 50, 90)}
    return {**{f"p{q}": round(v, 1) for q, v in at.items()}, "max": round(back[-1], 1)}


def row(w: Window, rec: Recorder, log: Log) -> dict[str, Any]:
    """A window's figures: what the bots saw against what the server's log holds."""

    def within(t: float) -> bool:
        return w.t0 <= t < w.t1

    def platform(kind: str) -> list[tuple[int, dict[str, Any]]]:
        lo, hi = w.wall0 * 1000, w.wall1 * 1000
        return [(m, d) for m, k, d, at in log.platform if k == kind and lo <= at < hi]

    seen = {k: v for k, v in rec.events.items() if v[0] in MOVE_KINDS and within(v[2])}
    lost = [
        {"match": m, "seq": seq, "type": kind, "player": player}
        for (m, seq), (kind, player, _) in seen.items()
        if log.events.get((m, seq)) != (kind, player)
    ]
    lost += [
        {"match": m, "version_seen": v, "version_stored": log.versions.get(m)}
        for m, (v, t) in rec.versions.items()
        if within(t) and v > log.versions.get(m, 0)
    ]
    charges = [c for c in rec.charges if within(c[0])]
    stuck = [s for s in rec.stuck if within(s[0])]
    credits = platform("credit")
    credited = Counter[int]()
    for m, d in credits:
        credited[m] += int(d.get("ms") or 0)
    voided = [
        {
            "match": m,
            "reason": d.get("reason", ""),
            # Only an outage of the whole tier over three minutes voids a match.
            "justified": "unreachable" in d.get("reason", "")
            and w.tier
            and (w.healthy_s or 0) > OUTAGE_VOID_AFTER_S,
        }
        for m, d in platform("voided")
    ]
    window = rec.between(w.t0, w.t1)
    errors = Counter(window["errors"])
    for kind, code in (("timeout", "lost_on_time"), ("aborted", "aborted")):
        if n := len(platform(kind)):
            errors[code] += n
    return {
        "fault": w.label,
        "hit": w.hit,
        "live": w.live,
        "moves": len(seen),
        "moves_lost": len(lost),
        "lost": lost[:20],
        "charged_ms": round(sum(c[3] for c in charges)),
        # The largest first: they say most about what went wrong.
        "charged": [timeline(w, rec, *c) for c in sorted(charges, key=lambda c: -c[3])[:20]],
        "credited_matches": len(credited),
        "rejoins": sum(bool(d.get("rejoin")) for _, d in credits),
        "credited_ms": sum(credited.values()),
        "credited_max_ms": max(credited.values(), default=0),
        "credits": len(credits),
        # One stretch of time is given back once: a match given the same ms twice (an
        # outage of the tier and a killed peer's seat, say) is a fault.
        "credited_twice": len(given_twice(credits)),
        "voided": len(voided),
        "voided_unjustified": sum(not v["justified"] for v in voided),
        "voids": voided[:20],
        "stuck": len(stuck),
        "stuck_seats": [
            {"match": m, "seat": seat, "since": round(t - w.t0, 2), "saw": v, "opponent_saw": top}
            for t, m, seat, v, top in stuck[:20]
        ],
        "dropped": window["drops"],
        "back_s": None if w.back_s is None else round(w.back_s, 1),
        # When the sockets came back (s after the signal): the wave's shape, not only its end.
        "back_quantiles_s": back_quantiles(w, rec),
        "not_back": w.not_back,
        "exit_s": None if w.exit_s is None else round(w.exit_s, 1),
        "killed_after_sigterm": w.killed,
        "healthy_s": None if w.healthy_s is None else round(w.healthy_s, 1),
        "errors": dict(errors),
        "error_examples": window["error_examples"],
        "ended": dict(window["ended"]),
    }


def given_twice(credits: list[tuple[int, dict[str, Any]]]) -> set[int]:
    """The matches given some millisecond back twice (credits' given spans overlap).

    A credit event's given span is ``[to - ms, to)``: an outage's or a rejoin's part
    that the running decision (or a start / continue window) was charged.
    """
    spans: dict[int, list[tuple[int, int]]] = {}
    for m, d in credits:
        ms, to = int(d.get("ms") or 0), d.get("to")
        if ms > 0 and to is not None:
            spans.setdefault(m, []).append((int(to) - ms, int(to)))
    twice = set()
    for m, given in spans.items():
        given.sort()
        for (_, end), (start, _) in zip(given, given[1:], strict=False):
            if start < end:
                twice.add(m)
    return twice


def timeline(
    w: Window, rec: Recorder, t: float, m: int, seat: int, ms: float, version: int
) -> dict[str, Any]:
    """A charge, and what its seat went through, in s after the fault's signal."""
    moves = [x for x in rec.moves if (x.match_id, x.seat) == (m, seat) and x.version < version]
    move = max(moves, key=lambda x: x.version, default=None)
    out: dict[str, Any] = {
        "match": m,
        "seat": seat,
        "ms": round(ms),
        "seen_charged": round(t - w.t0, 2),
    }
    out["reconnected"] = [
        round(r - w.t0, 2)
        for r, rm, rs in rec.reconnects
        if (rm, rs) == (m, seat) and w.t0 <= r <= t
    ]
    if move is not None:
        out.update(
            decided_from=round(move.turn_seen - w.t0, 2),
            thought=round(move.think_s, 2),
            sent=round(move.sent - w.t0, 2),
        )
    return out


def broken(r: dict[str, Any]) -> list[str]:
    """The promises a row breaks (empty: none)."""
    out = []
    if r["moves_lost"]:
        out.append(f"{r['moves_lost']} moves lost")
    if r["charged_ms"]:
        out.append(f"{r['charged_ms']} ms charged")
    if r["voided_unjustified"]:
        out.append(f"{r['voided_unjustified']} matches voided without cause")
    if r["credited_twice"]:
        out.append(f"{r['credited_twice']} matches given the same time back twice")
    if r["stuck"]:
        out.append(f"{r['stuck']} seats stuck on an old view")
    if r["back_s"] is None:
        out.append(f"{r['not_back']} sockets never came back")
    return out


def table(rows: list[dict[str, Any]]) -> str:
    header = "fault|live|moves|moves lost|ms charged|credited|voided|dropped|back s|stuck|restart s"
    header += "|errors"
    out = []
    for r in rows:
        credited = "0"
        if r["credits"]:
            credited = f"{r['credited_matches']} (≤ {r['credited_max_ms'] / 1000:.1f} s)"
        voided = str(r["voided"])
        if r["voided"]:
            voided += f" ({r['voided'] - r['voided_unjustified']} justified)"
        back = "never" if r["back_s"] is None else report._n(r["back_s"])
        out.append(
            [
                r["fault"],
                str(r["live"]),
                str(r["moves"]),
                str(r["moves_lost"]),
                str(r["charged_ms"]),
                credited,
                voided,
                str(r["dropped"]),
                back,
                str(r["stuck"]),
                report._n(r["healthy_s"]),
                report._errors(r),
            ]
        )
    return report.markdown(header.split("|"), out)


# --- command line ---------------------------------------------------------------------------


def parse(argv: list[str]) -> Options:
    d = Options()
    p = argparse.ArgumentParser(
        prog="python -m loadtest.drill",
        description="Kill the services set-up's processes one kind at a time while bots play; "
        "prints a row per fault and writes JSON.",
    )
    p.add_argument("--matches", type=int, default=d.matches, help="live matches throughout")
    p.add_argument("--think", default="1-4", help="s a bot thinks per decision: LO-HI")
    p.add_argument(
        "--faults",
        default=",".join(d.faults),
        help=f"in order, from one-web,all-web,worker,beat,proxy (default {','.join(d.faults)})",
    )
    p.add_argument("--signals", default="TERM,KILL", help="each fault with each of these")
    p.add_argument("--down", type=float, default=d.down, help="s a killed process stays down")
    p.add_argument("--settle", type=float, default=d.settle, help="s of play between faults")
    p.add_argument("--baseline", type=float, default=d.baseline, help="s with no fault first")
    p.add_argument("--database-url", default=d.database_url, help="dropped first: *drill* only")
    p.add_argument("--redis-url", default=d.redis_url, help="emptied first unless --prefix")
    p.add_argument(
        "--prefix", default="", help="Redis key prefix: share a Redis database, do not empty it"
    )
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--log-dir", type=Path, default=d.log_dir)
    p.add_argument("--json", type=Path, default=d.json)
    a = p.parse_args(argv)
    lo, _, hi = a.think.partition("-")
    faults = a.faults.split(",")
    signals = a.signals.split(",")
    for name in faults:
        if name not in d.faults:
            p.error(f"unknown fault {name!r}")
    for s in signals:
        if s not in SIGNALS:
            p.error(f"unknown signal {s!r}: TERM or KILL")
    return Options(
        matches=a.matches,
        think=(float(lo), float(hi or lo)),
        faults=faults,
        signals=signals,
        down=a.down,
        settle=a.settle,
        baseline=a.baseline,
        database_url=a.database_url,
        redis_url=a.redis_url,
        prefix=a.prefix,
        seed=a.seed,
        log_dir=a.log_dir,
        json=a.json,
    )


def main(argv: list[str]) -> int:
    opts = parse(argv)
    # Stopped from outside: unwind, so that the processes started here are stopped.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    from .goals import engine_us_per_action

    # The machine's speed, in the same run: the times below are read against it.
    engine_us = engine_us_per_action()
    say(f"engine: {engine_us:.1f} µs per applied action on this machine now")
    started, load_before, busy0 = time.time(), os.getloadavg(), procstat.machine_busy()
    cluster = Cluster(opts.database_url, opts.redis_url, prefix=opts.prefix, log_dir=opts.log_dir)
    say(f"starting {', '.join(cluster.types)} one by one on {cluster.base} (logs: {opts.log_dir})")
    try:
        cluster.start()
        accounts = [
            Account(u, k) for u, k in cluster.create_accounts(2 * opts.matches + 4, "drillbot")
        ]
        drill = Drill(cluster, opts, accounts)
        windows = asyncio.run(drill.run())
        log = read_log(opts.database_url, sorted(drill.rec.versions))
    finally:
        cluster.stop()
    busy1 = procstat.machine_busy()
    rows = [row(w, drill.rec, log) for w in windows]
    out = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": round(time.time() - started),
        "machine": {
            "cpus": os.cpu_count(),
            "engine_us_per_action": round(engine_us, 2),
            "load_avg_before": load_before,
            "load_avg_after": os.getloadavg(),
            # The whole machine over the run, % of one core (2 cores: up to 200).
            "cpu_pct": round(
                (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]) * 100 * (os.cpu_count() or 1),
                1,
            ),
        },
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(opts).items()},
        "url": cluster.base,
        "processes": cluster.procfile,
        "rows": rows,
    }
    opts.json.parent.mkdir(parents=True, exist_ok=True)
    opts.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print()
    print(table(rows))
    m = out["machine"]
    print(
        f"\n({out['seconds']} s; engine {m['engine_us_per_action']} µs per action; "
        f"machine {m['cpu_pct']} % of one core, load average "
        f"{m['load_avg_before'][0]:.1f} → {m['load_avg_after'][0]:.1f}; figures in {opts.json})"
    )
    failures = [f"{r['fault']}: {', '.join(b)}" for r in rows if (b := broken(r))]
    for f in failures:
        print(f"BROKEN {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
