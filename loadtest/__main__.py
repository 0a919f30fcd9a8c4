"""``python -m loadtest`` (``make bench-load``): see loadtest/__init__.py and README *Figures*."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import goals, report
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


def _setups(text: str) -> list[str]:
    names = text.split(",")
    for name in names:
        if name not in SETUPS:
            raise argparse.ArgumentTypeError(f"unknown set-up {name!r}: {', '.join(SETUPS)}")
    return names


_D = Options()
# Each option: its flag, how to read it, its default (as typed) and what it means.
# The field of Options it sets is the flag's name; BENCH_LOAD_<NAME> overrides the default.
OPTIONS: list[tuple[str, Any, str, str]] = [
    ("--setups", _setups, ",".join(_D.setups), "embedded,services"),
    ("--levels", _ints, ",".join(map(str, _D.levels)), "live matches per level, or none"),
    ("--idle", int, str(_D.idle), "idle lobby sockets, then as many idle match sockets; 0: none"),
    ("--window", float, str(_D.window), "seconds measured per level"),
    ("--settle", float, str(_D.settle), "seconds between a ramp and its window"),
    ("--ramp", float, str(_D.ramp), "the most new matches a second while ramping up"),
    ("--ramp-timeout", float, str(_D.ramp_timeout), "seconds a ramp may take at most"),
    ("--think", _range, "1-4", "seconds a bot thinks per decision, uniform: LO-HI"),
    ("--protocol", int, "2", "what the JSON bots speak: 1, or 2 (state frames as deltas, ?v=2)"),
    ("--probes", _words, "echo,flood", "echo,flood or none (an idle match is measured too)"),
    ("--probe-seconds", float, str(_D.probe_seconds), "seconds of each probe's match"),
    (
        "--echo-pairs",
        int,
        str(_D.echo_pairs),
        "echo probe: pairs of sockets relaying once a second each, for the server's CPU "
        "per relay; 0: none",
    ),
    ("--flood-workers", int, str(_D.flood_workers), "concurrent wrong-password logins"),
    ("--soak", float, "0", "seconds: run only a soak at --soak-matches, report RSS growth"),
    ("--soak-matches", int, str(_D.soak_matches), "live matches during a soak"),
    ("--json", Path, str(_D.json), "where the results go"),
    ("--log-dir", Path, str(_D.log_dir), "where the servers' logs go"),
]


def parse(argv: list[str]) -> Options:
    p = argparse.ArgumentParser(
        prog="python -m loadtest",
        description="Bots speaking docs/protocol.md against the embedded default and the "
        "services set-up; prints a table per set-up. Each option's default can also be set "
        "as BENCH_LOAD_<NAME> in the environment (e.g. BENCH_LOAD_WINDOW=10).",
    )
    for flag, kind, default, meaning in OPTIONS:
        name = flag[2:].replace("-", "_")
        default = os.environ.get(f"BENCH_LOAD_{name.upper()}", default)
        p.add_argument(
            flag, type=kind, default=kind(default), help=f"{meaning} (default {default})"
        )
    p.add_argument(
        "--keep-db",
        action="store_true",
        help="services: keep the bench database and Redis db instead of starting empty",
    )
    p.add_argument(
        "--no-skip",
        action="store_true",
        help="measure the levels above one where under half the matches were live",
    )
    p.add_argument(
        "--no-profile",
        action="store_true",
        help="no py-spy profile of the web processes during each level's window",
    )
    p.add_argument("--seed", type=int, default=None, help="the bots' random seed")
    a = vars(p.parse_args(argv))
    fresh = not a.pop("keep_db")
    return Options(**a, fresh=fresh)


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
    # Stopped from outside (timeout, kill): unwind, so that the servers started
    # here are torn down on the way out.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    started = time.time()
    # The machine's own speed, measured in the same run: the goals are stated in it.
    say("engine yardstick (make bench's measure)")
    us_per_action = goals.engine_us_per_action()
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
        "engine_us_per_action": round(us_per_action, 2),
        "goals": {name: goals.evaluate(r, us_per_action) for name, r in results.items()},
    }
    opts.json.parent.mkdir(parents=True, exist_ok=True)
    opts.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print()
    for name, result in results.items():
        print(report.render(name, result))
        print()
        print("\n".join(f"- {line}" for line in out["goals"][name]))
        print()
    print(f"({out['seconds']} s; figures also in {opts.json})")
    return 1 if any(r.get("error") for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
