"""``python -m loadtest`` (``make bench-load``): see loadtest/__init__.py and README *Figures*."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import report
from .bots import Account
from .run import Options, Run, say
from .setups import SETUPS


def _ints(text: str) -> list[int]:
    return [] if text.strip() in ("", "none") else [int(x) for x in text.split(",")]


def _range(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition("-")
    return float(lo), float(hi or lo)


def _words(text: str) -> set[str]:
    return set() if text.strip() in ("", "none") else set(text.split(","))


def parse(argv: list[str]) -> Options:
    env = os.environ.get
    d = Options()
    p = argparse.ArgumentParser(
        prog="python -m loadtest",
        description="Bots speaking docs/protocol.md against the embedded default and the "
        "services set-up; prints a table per set-up. Each option also reads BENCH_LOAD_<NAME> "
        "from the environment (e.g. BENCH_LOAD_WINDOW=10).",
    )
    p.add_argument(
        "--setups",
        default=env("BENCH_LOAD_SETUPS", ",".join(d.setups)),
        help="embedded,services (default both)",
    )
    p.add_argument(
        "--levels",
        default=env("BENCH_LOAD_LEVELS", ",".join(map(str, d.levels))),
        help="live matches per level, comma-separated, or none",
    )
    p.add_argument(
        "--idle",
        type=int,
        default=int(env("BENCH_LOAD_IDLE", d.idle)),
        help="idle lobby sockets, then idle match sockets (0: skip)",
    )
    p.add_argument(
        "--window",
        type=float,
        default=float(env("BENCH_LOAD_WINDOW", d.window)),
        help="seconds measured per level",
    )
    p.add_argument(
        "--settle",
        type=float,
        default=float(env("BENCH_LOAD_SETTLE", d.settle)),
        help="seconds between a ramp and its window",
    )
    p.add_argument(
        "--ramp",
        type=float,
        default=float(env("BENCH_LOAD_RAMP", d.ramp)),
        help="new matches a second while ramping up (idle sockets: twice as many)",
    )
    p.add_argument(
        "--ramp-timeout",
        type=float,
        default=d.ramp_timeout,
        help="seconds a ramp may take before the level is measured anyway",
    )
    p.add_argument(
        "--think",
        default=env("BENCH_LOAD_THINK", "1-4"),
        help="seconds a bot thinks per decision, uniform: LO-HI",
    )
    p.add_argument(
        "--probes",
        default=env("BENCH_LOAD_PROBES", "echo,flood"),
        help="echo,flood or none (one idle match is always measured with them)",
    )
    p.add_argument("--probe-seconds", type=float, default=d.probe_seconds)
    p.add_argument("--flood-workers", type=int, default=d.flood_workers)
    p.add_argument(
        "--soak",
        type=float,
        default=float(env("BENCH_LOAD_SOAK", 0)),
        help="seconds: run only a soak at --soak-matches and report RSS growth",
    )
    p.add_argument("--soak-matches", type=int, default=d.soak_matches)
    p.add_argument(
        "--keep-db",
        action="store_true",
        help="services: keep the bench database and Redis db instead of starting empty",
    )
    p.add_argument("--seed", type=int, default=None, help="the bots' random seed")
    p.add_argument(
        "--json",
        default=env("BENCH_LOAD_JSON", str(d.json_path)),
        help="where to write the results (default var/bench-load.json)",
    )
    p.add_argument("--log-dir", default=str(d.log_dir), help="the servers' logs go here")
    a = p.parse_args(argv)
    setups = a.setups.split(",")
    for name in setups:
        if name not in SETUPS:
            p.error(f"unknown set-up {name!r}: {', '.join(SETUPS)}")
    return Options(
        setups=setups,
        levels=_ints(a.levels),
        idle=a.idle,
        window=a.window,
        settle=a.settle,
        ramp=a.ramp,
        ramp_timeout=a.ramp_timeout,
        think=_range(a.think),
        probes=_words(a.probes),
        probe_seconds=a.probe_seconds,
        flood_workers=a.flood_workers,
        soak=a.soak,
        soak_matches=a.soak_matches,
        fresh=not a.keep_db,
        seed=a.seed,
        log_dir=Path(a.log_dir),
        json_path=Path(a.json),
    )


def raise_file_limit() -> None:
    """Thousands of sockets need thousands of descriptors, here and in the servers
    started from here (they inherit the limit), as an operator's ``ulimit -n`` would."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def run_setup(name: str, opts: Options) -> dict[str, Any]:
    setup = SETUPS[name](fresh=opts.fresh, log_dir=opts.log_dir)
    say(f"[{name}] starting `make {setup.target}` on {setup.base} (log: {setup.log_path})")
    t0 = time.monotonic()
    try:
        setup.start()
        say(f"[{name}] up after {time.monotonic() - t0:.1f} s; creating the bots' accounts")
        accounts = [Account(u, k) for u, k in setup.create_accounts(opts.accounts_needed())]
        result = asyncio.run(Run(setup, opts, accounts).main())
    except Exception as exc:  # report what was measured, and why the rest was not
        say(f"[{name}] failed: {exc!r}")
        result = {"error": repr(exc), "log_tail": setup.log_tail()}
    finally:
        setup.stop()
    result["processes_seen"] = sorted(set(setup.kinds.values()))
    return result


def main(argv: list[str]) -> int:
    opts = parse(argv)
    raise_file_limit()
    started = time.time()
    results: dict[str, Any] = {}
    for name in opts.setups:
        results[name] = run_setup(name, opts)
    out = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": round(time.time() - started),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_after": os.getloadavg(),
        },
        "options": {
            k: (sorted(v) if isinstance(v, set) else str(v) if isinstance(v, Path) else v)
            for k, v in asdict(opts).items()
        },
        "setups": results,
    }
    opts.json_path.parent.mkdir(parents=True, exist_ok=True)
    opts.json_path.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print()
    for name, result in results.items():
        print(report.render(name, result))
        print()
    print(f"({out['seconds']} s; figures also in {opts.json_path})")
    return 1 if any(r.get("error") for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
