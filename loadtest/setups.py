"""The two set-ups, each started the way an operator would and torn down at the end.

- ``embedded``: ``make run`` (Daphne, SQLite, in-memory channel layer, asyncio
  timers) on a free port, with ``DATABASE_URL`` pointing at a temporary SQLite file;
- ``services``: ``make run-services`` (the Procfile through honcho: release, web,
  worker, beat, and whatever else the Procfile grows) with its own PostgreSQL
  database and Redis database.

Each runs in its own process group (``make`` is started in a new session). Its
processes are found by walking the process tree below ``make`` rather than
being named here, so a second web process or a proxy added to the Procfile is
measured without a change. Teardown sends SIGTERM to make's group (honcho
passes it on to each process's group), then SIGKILL to whatever of that tree is
left, by pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from . import procstat

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BENCH_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/spectacular_bench"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/9"
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 20
# Variables of the harness's own environment that must not leak into a set-up.
_NOT_INHERITED = ("DATABASE_URL", "REDIS_URL", "MATCH_TIMERS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def ephemeral_low() -> int:
    """The lowest port the kernel gives outgoing connections (Linux; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(n: int) -> int:
    """A port p with p … p+n-1 all free (HAProxy on p, the web processes above it, their
    metrics above those), below the kernel's range for outgoing connections.

    A port the kernel picked (``bind(0)``) is in that range, and while its process is
    down for a restart any outgoing connection may take it: at 500 matches thousands
    of them are opened meanwhile (the bots' retries, HAProxy's checks), and a
    restarted web process found its port taken and never listened ("Address already
    in use"; the drill waited 180 s for it; ``make bench-load`` lost a run to it at
    its start). An operator's fixed ports (8000–8002) are below that range too.
    """
    low = ephemeral_low()
    rng = random.Random()
    for _ in range(1000):
        base = rng.randrange(max(1024, low - 12_000), low - n)
        try:
            with contextlib.ExitStack() as stack:
                for port in range(base, base + n):
                    stack.enter_context(socket.socket()).bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"no {n} free ports in a row below {low}")


class Setup:
    """One set-up's processes, below a ``make`` started in a session of its own."""

    name = ""
    target = ""

    def __init__(self, *, fresh: bool = True, log_dir: Path | None = None) -> None:
        # HAProxy (or the one web process) on the first, web1 and web2 on the next two,
        # their metrics on the two after: all below the outgoing connections' range.
        self.port = free_ports(5)
        self.host = "127.0.0.1"
        self.base = f"http://{self.host}:{self.port}"
        self.fresh = fresh
        self.tmp = tempfile.TemporaryDirectory(prefix=f"bench-{self.name}-")
        self.log_path = (log_dir or Path(self.tmp.name)) / f"bench-load-{self.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.metrics_ports: list[int] = []  # each web process's /metrics (loopback only)
        self.kinds: dict[int, str] = {}  # pid → role, filled by procstat.snapshot
        env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
        env.update(
            HOST=self.host,
            PORT=str(self.port),
            BENCH_ECHO="1",
            # The beat schedule file and any other scratch file stay ours.
            TMPDIR=self.tmp.name,
            PYTHONUNBUFFERED="1",
        )
        self.env = env

    # --- life cycle ----------------------------------------------------------------

    def prepare(self) -> None:
        """Anything to do before the operator's command (a fresh database)."""

    def start(self) -> None:
        self.prepare()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            ["make", "--no-print-directory", self.target],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(self.base + "/accounts/login/", timeout=5) as r:
                    r.read()
                return
            except (OSError, urllib.error.URLError) as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"{self.name}: the server did not start; its log "
                        f"({self.log_path}) ends:\n{self.log_tail()}"
                    ) from exc
                time.sleep(0.2)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def processes(self) -> list[procstat.Proc]:
        if self.proc is None:
            return []
        return procstat.descendants(self.proc.pid, procstat.all_procs())

    def stop(self) -> None:
        if self.proc is None:
            return
        tree = self.processes()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            left = [p for p in tree if procstat.read_proc(p.pid) is not None]
            self.proc.poll()
            if not left:
                break
            time.sleep(0.2)
        for p in tree:
            now = procstat.read_proc(p.pid)
            if now is not None and now.start == p.start:  # still the process we started
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.proc = None
        self.cleanup()

    def cleanup(self) -> None:
        self.tmp.cleanup()

    # --- the bots' accounts -----------------------------------------------------------

    def create_accounts(self, count: int, prefix: str = "loadbot") -> list[tuple[str, str]]:
        """Bulk users and sessions in this set-up's database (loadtest/accounts.py)."""
        out = subprocess.run(
            [PY, "-m", "loadtest.accounts", "--count", str(count), "--prefix", prefix],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
        )
        return [(name, key) for name, key in json.loads(out.stdout)]


class Embedded(Setup):
    """``make run``: the embedded default, on a temporary SQLite file."""

    name = "embedded"
    target = "run"

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.env["DATABASE_URL"] = f"sqlite:///{Path(self.tmp.name) / 'db.sqlite3'}"
        # Its one web process's metrics (loopback only): the event loop's lateness and
        # where a move's time goes (sb_move_stage_seconds).
        self.metrics_ports = [self.port + 3]
        self.env["METRICS_PORT"] = str(self.metrics_ports[0])


class Services(Setup):
    """``make run-services``: PostgreSQL + Redis + Daphne + Celery worker and beat."""

    name = "services"
    target = "run-services"

    def __init__(
        self, database_url: str = BENCH_DATABASE_URL, redis_url: str = BENCH_REDIS_URL, **kw: object
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.env["DATABASE_URL"] = database_url
        self.env["REDIS_URL"] = redis_url
        # Each web process's metrics on a port of its own (the Procfile passes these on).
        self.metrics_ports = [self.port + 3, self.port + 4]
        self.env["WEB1_METRICS_PORT"] = str(self.metrics_ports[0])
        self.env["WEB2_METRICS_PORT"] = str(self.metrics_ports[1])

    def prepare(self) -> None:
        """With ``fresh`` (the default): drop the bench database (the release step
        creates it again) and empty the bench Redis database, so that nothing left
        by an earlier run (live matches, queued deadline tasks) is measured."""
        if not self.fresh:
            return
        self.drop_database()
        self.flush_redis()

    def drop_database(self) -> None:
        import psycopg
        from psycopg import sql

        name, params = pg_params(self.env["DATABASE_URL"])
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def flush_redis(self) -> None:
        import redis

        client = redis.Redis.from_url(self.env["REDIS_URL"])
        try:
            client.flushdb()
        finally:
            client.close()


def pg_params(url: str) -> tuple[str, dict[str, Any]]:
    """A PostgreSQL ``DATABASE_URL`` as (database name, psycopg's connection keywords)."""
    import dj_database_url

    db = dj_database_url.parse(url)
    keys = {"host": "HOST", "port": "PORT", "user": "USER", "password": "PASSWORD"}
    return str(db["NAME"]), {k: db.get(key) for k, key in keys.items() if db.get(key)}


SETUPS = {"embedded": Embedded, "services": Services}
