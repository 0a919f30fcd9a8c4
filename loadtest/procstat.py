"""CPU and memory of processes, read from /proc (Linux).

CPU is ``utime + stime`` from ``/proc/<pid>/stat``, summed over all threads of
the process; a window's CPU is the difference between two snapshots. A process
is keyed by pid *and* start time, so a pid reused during the window is not
mistaken for the old process.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

TICK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    start: int  # start time, clock ticks after boot
    cpu: int  # utime + stime, clock ticks
    rss_kb: int
    comm: str
    pgrp: int = 0  # process group
    state: str = ""  # R, S, D, Z (a zombie: dead, not yet reaped), ...


def read_proc(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None  # gone
    # comm may hold spaces and parentheses: it ends at the last ')'.
    comm = raw[raw.index("(") + 1 : raw.rindex(")")]
    rest = raw[raw.rindex(")") + 2 :].split()
    return Proc(
        pid=pid,
        ppid=int(rest[1]),
        start=int(rest[19]),
        cpu=int(rest[11]) + int(rest[12]),
        rss_kb=int(rest[21]) * PAGE_KB,
        comm=comm,
        pgrp=int(rest[2]),
        state=rest[0],
    )


def all_procs() -> dict[int, Proc]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            p = read_proc(int(name))
            if p is not None:
                out[p.pid] = p
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def group(pgid: int) -> list[Proc]:
    """The live processes of process group ``pgid`` (zombies are dead already)."""
    return [p for p in all_procs().values() if p.pgrp == pgid and p.state != "Z"]


def descendants(root: int, procs: dict[int, Proc]) -> list[Proc]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = defaultdict(list)
    for p in procs.values():
        children[p.ppid].append(p.pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            out.append(procs[pid])
        todo.extend(children.get(pid, []))
    return out


def kind_of(cmd: str) -> str:
    """The role of a server process, from its command line (Procfile or `make run`)."""
    words = cmd.split()
    exe = os.path.basename(words[0]) if words else ""
    if exe in ("sh", "bash", "dash", "make") or "honcho" in cmd:
        return "other"  # the launchers between make and the servers
    if "config.serve" in cmd or "daphne" in cmd or "uvicorn" in cmd or "gunicorn" in cmd:
        return "web"
    if "celery" in cmd:
        if " worker" in cmd:
            return "worker"
        if " beat" in cmd:
            return "beat"
    if exe in ("nginx", "haproxy", "caddy", "envoy", "traefik") or "proxy" in cmd:
        return "proxy"
    return "other"


def machine_busy() -> tuple[int, int]:
    """(busy ticks, total ticks) of the whole machine, all cores."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


@dataclass
class Snapshot:
    at: float  # time.monotonic()
    server: dict[tuple[int, int], tuple[str, Proc]]  # (pid, start) → (kind, proc)
    postgres: dict[tuple[int, int], Proc]
    redis: dict[tuple[int, int], Proc]
    harness: Proc | None
    machine: tuple[int, int]


def snapshot(server_roots: Iterable[int], kinds: dict[int, str], at: float) -> Snapshot:
    """Every process of the set-up (below ``server_roots``), PostgreSQL, Redis and us.

    ``kinds`` caches each pid's role, so command lines are read once per process.
    """
    procs = all_procs()
    server = {}
    for root in server_roots:
        for p in descendants(root, procs):
            if p.pid not in kinds:
                kinds[p.pid] = kind_of(cmdline(p.pid))
            server[(p.pid, p.start)] = (kinds[p.pid], p)

    def named(prefix: str) -> dict[tuple[int, int], Proc]:
        return {(p.pid, p.start): p for p in procs.values() if p.comm.startswith(prefix)}

    return Snapshot(
        at=at,
        server=server,
        postgres=named("postgres"),
        redis=named("redis-server"),
        harness=procs.get(os.getpid()),
        machine=machine_busy(),
    )


@dataclass
class Usage:
    """CPU over a window, as % of one core, and RSS at its end."""

    seconds: float
    by_kind: dict[str, float] = field(default_factory=dict)  # % of a core
    server_cpu_s: float = 0.0
    rss_mb: dict[str, list[float]] = field(default_factory=dict)  # kind → each process's MB
    processes: dict[str, int] = field(default_factory=dict)  # kind → how many
    postgres: float = 0.0
    redis: float = 0.0
    harness: float = 0.0
    machine: float = 0.0  # the whole machine, % of a core (2 cores: up to 200)

    @property
    def server(self) -> float:
        return sum(self.by_kind.values())


def _ticks(before: dict[tuple[int, int], Proc], after: dict[tuple[int, int], Proc]) -> int:
    # A process born during the window counts from zero; one that died is lost
    # (its last ticks cannot be read any more), which undercounts a little.
    return sum(p.cpu - (before[k].cpu if k in before else 0) for k, p in after.items())


def usage(a: Snapshot, b: Snapshot) -> Usage:
    secs = max(b.at - a.at, 1e-9)

    def pct(ticks: float) -> float:
        return ticks / TICK / secs * 100

    u = Usage(seconds=secs)
    kinds = sorted({kind for kind, _ in b.server.values()})
    for kind in kinds:
        before = {k: p for k, (kd, p) in a.server.items() if kd == kind}
        after = {k: p for k, (kd, p) in b.server.items() if kd == kind}
        ticks = _ticks(before, after)
        u.by_kind[kind] = pct(ticks)
        u.server_cpu_s += ticks / TICK
        u.rss_mb[kind] = sorted((p.rss_kb / 1024 for p in after.values()), reverse=True)
        u.processes[kind] = len(after)
    u.postgres = pct(_ticks(a.postgres, b.postgres))
    u.redis = pct(_ticks(a.redis, b.redis))
    if a.harness and b.harness:
        u.harness = pct(b.harness.cpu - a.harness.cpu)
    busy = b.machine[0] - a.machine[0]
    u.machine = pct(busy)
    return u


def rss_by_process(s: Snapshot) -> dict[str, float]:
    """``"web:1234"`` → RSS in MB, for every server process in the snapshot."""
    return {f"{kind}:{p.pid}": p.rss_kb / 1024 for kind, p in s.server.values()}
