"""Where the web processes' CPU goes during a level: py-spy's samples, sorted by layer.

``make bench-load`` states CPU per move in engine actions (``goals``); when a goal is
missed it must also say why (issue 14). During each level's window every web process
is sampled by py-spy (``record --gil --nonblocking --format raw``: only samples in
which a thread holds the GIL, so the shares are shares of Python's CPU, and the
process is not paused to be read); the kernel's share (system calls, which py-spy
does not see) is read from ``/proc``, and py-spy's layers share the rest. Each
sample's stack is put in one layer (:func:`layer`), and each layer's share of the
move's CPU is given in engine actions too, so the line reads the same on a fast
machine and a slow one.

A sample belongs to the innermost frame of this project's code in its stack (a
library frame counts for the code that called it: psycopg under ``store.py`` is the
move's transaction, Redis under ``liveness.py`` is upkeep), except that the
transport's own libraries (Daphne, Twisted, autobahn) below any frame of ours are the
transport: a consumer's ``send`` is the transport's work, and so is Channels' dispatch
under our consumers. A stack with no frame of ours (py-spy reads some threads' stacks
only in part) belongs to the layer its innermost known library serves (psycopg: the
move; Jinja: the fragments; Redis: publishing; the event loop: the transport).

Without py-spy (or without the right to read another process: ``ptrace`` refused),
the profile is skipped and the report says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RATE_HZ = 97  # samples a second per process (prime: not in step with the 20 Hz pulse)

# The layers, in the order the report gives them when their shares tie.
TRANSPORT = "transport"
KERNEL = "kernel"
LAYERS: dict[str, str] = {
    KERNEL: "the kernel (system calls: sockets, epoll, thread wake-ups)",
    TRANSPORT: "the transport (Daphne, Twisted, Channels, asyncio)",
    "move": "the move's transaction (rules, rows, database)",
    "fragments": "the page's fragments (HTML, the board's SVG)",
    "views": "each audience's view, encoded",
    "publish": "publishing (the channel layer, Redis)",
    "hop": "the hop to a database thread and back",
    "consumers": "our sockets' own code (frames read, budgets, sends)",
    "upkeep": "upkeep (liveness, presence, admission, metrics, sweeps)",
    "other": "other",
}

# This project's code, by file (path relative to the repository), first match wins.
_OURS: list[tuple[str, str]] = [
    ("matches/ui/", "fragments"),
    ("table/", "fragments"),
    ("templates/", "fragments"),
    ("matches/play/audience.py", "views"),
    ("engine/view.py", "views"),
    ("matches/realtime/protocol_v2.py", "views"),
    ("matches/play/frames.py", "views"),
    ("matches/play/jsontext.py", "views"),
    ("matches/play/db.py", "hop"),
    ("matches/play/dbpool.py", "hop"),
    ("matches/realtime/broadcast.py", "publish"),
    ("matches/realtime/layers.py", "publish"),
    ("matches/realtime/catchup.py", "publish"),
    ("matches/clock/liveness.py", "upkeep"),
    ("matches/clock/presence.py", "upkeep"),
    ("matches/clock/sweeper.py", "upkeep"),
    ("matches/clock/metrics.py", "upkeep"),
    ("matches/play/admission.py", "upkeep"),
    ("matches/play/sync_redis.py", "upkeep"),
    ("matches/realtime/periodic.py", "upkeep"),
    ("matches/play/", "move"),
    ("matches/clock/", "move"),
    ("engine/", "move"),
    ("matches/realtime/", "consumers"),
    ("config/", "consumers"),
]
_PROJECT = frozenset({
    "matches", "engine", "table", "config", "templates", "accounts", "social",
    "tournaments", "ratings", "history", "rules", "bots",
})  # fmt: skip
_TRANSPORT_LIBS = frozenset({"daphne", "twisted", "autobahn", "txaio", "channels"})
# A stack with no frame of ours (py-spy may read a thread's stack only in part): the
# layer its innermost library serves.
_LIBRARIES = {
    **dict.fromkeys(("asyncio", "selectors.py", *_TRANSPORT_LIBS), TRANSPORT),
    **dict.fromkeys(("psycopg", "psycopg_pool", "django"), "move"),
    **dict.fromkeys(("jinja2", "markupsafe"), "fragments"),
    **dict.fromkeys(("redis", "channels_redis", "msgpack"), "publish"),
    **dict.fromkeys(("asgiref", "concurrent", "threading.py"), "hop"),
}
_ROOT = str(Path(__file__).resolve().parents[1]) + "/"


def module_path(frame: str) -> str:
    """``function (path:line)`` → the file as a module path: ``daphne/server.py``,
    ``asyncio/events.py``, ``matches/play/act.py`` (py-spy shortens most paths so
    already; an absolute one is cut at ``site-packages``, the standard library or
    this repository)."""
    start = frame.rfind(" (")
    if start < 0:
        return ""
    path = frame[start + 2 :].rstrip(")").rsplit(":", 1)[0]
    for cut in ("site-packages/", "/lib/python3."):
        at = path.find(cut)
        if at >= 0:
            path = path[at + len(cut) :]
            if cut.startswith("/lib"):
                path = path.split("/", 1)[-1]  # "11/asyncio/x.py" → "asyncio/x.py"
            return path
    return path.removeprefix(_ROOT)


def _top(path: str) -> str:
    return path.split("/", 1)[0]


def layer(stack: list[str]) -> str:
    """The layer of one sample, its frames outermost first (py-spy's order)."""
    paths = [module_path(f) for f in stack]
    tops = [_top(p) for p in paths]
    for i in range(len(paths) - 1, -1, -1):
        if tops[i] not in _PROJECT:
            continue
        if any(t in _TRANSPORT_LIBS for t in tops[i + 1 :]):
            return TRANSPORT
        for prefix, name in _OURS:
            if paths[i].startswith(prefix):
                return name
        return "other"
    for t in reversed(tops):
        if t in _LIBRARIES:
            return _LIBRARIES[t]
    return "other"


def tally(raw: str) -> Counter[str]:
    """Samples per layer from py-spy's raw output (``frame;frame;... count`` a line)."""
    counts: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, n = line.rstrip().rpartition(" ")
        if not stack or not n.isdigit():
            continue
        counts[layer(stack.split(";"))] += int(n)
    return counts


def shares(counts: Counter[str]) -> dict[str, float]:
    total = sum(counts.values())
    if not total:
        return {}
    return {name: counts.get(name, 0) / total for name in LAYERS if counts.get(name)}


def user_system(pids: list[int]) -> tuple[int, int]:
    """Clock ticks the processes spent in user space and in the kernel, all threads.

    py-spy's ``--gil`` samples see Python holding the GIL, never a system call (a
    socket's write releases the GIL): the kernel's share of the CPU comes from here."""
    user = system = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        user, system = user + int(fields[11]), system + int(fields[12])
    return user, system


@dataclass
class Sampler:
    """py-spy on each of ``pids`` for ``seconds``; :meth:`result` waits and tallies."""

    pids: list[int]
    seconds: float
    procs: list[tuple[asyncio.subprocess.Process, Path]] = field(default_factory=list)
    problem: str | None = None
    _dir: Any = None
    _ticks0: tuple[int, int] = (0, 0)

    @staticmethod
    def program() -> str | None:
        here = Path(sys.executable).parent / "py-spy"
        return str(here) if here.exists() else shutil.which("py-spy")

    async def start(self) -> None:
        exe = self.program()
        if exe is None:
            self.problem = "py-spy is not installed"
            return
        if not self.pids:
            self.problem = "no web process to sample"
            return
        self._dir = tempfile.TemporaryDirectory(prefix="bench-profile-")
        self._ticks0 = user_system(self.pids)
        for pid in self.pids:
            out = Path(self._dir.name) / f"{pid}.txt"
            proc = await asyncio.create_subprocess_exec(
                exe, "record", "--gil", "--nonblocking", "--rate", str(RATE_HZ),
                "--duration", str(max(1, int(self.seconds))), "--format", "raw",
                "--output", str(out), "--pid", str(pid),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            self.procs.append((proc, out))

    async def result(self) -> dict[str, Any]:
        """``{"samples", "shares": {layer: share}}``, or ``{"skipped": why}``."""
        try:
            if self.problem:
                return {"skipped": self.problem}
            counts: Counter[str] = Counter()
            errors = []
            for proc, out in self.procs:
                try:
                    _, err = await asyncio.wait_for(proc.communicate(), self.seconds + 30)
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    errors.append("py-spy did not finish")
                    continue
                if out.exists():
                    counts += tally(out.read_text(errors="replace"))
                elif err:
                    errors.append(err.decode(errors="replace").strip().splitlines()[-1])
            if not counts:
                return {"skipped": "; ".join(errors) or "no samples"}
            user1, system1 = user_system(self.pids)
            user, system = user1 - self._ticks0[0], system1 - self._ticks0[1]
            kernel = system / (user + system) if user + system > 0 else 0.0
            return {
                "samples": sum(counts.values()),
                "shares": {KERNEL: kernel}
                | {k: v * (1 - kernel) for k, v in shares(counts).items()},
            }
        finally:
            if self._dir is not None:
                self._dir.cleanup()


def lines(profile: dict[str, Any], cpu_ms: float | None, us_per_action: float | None) -> list[str]:
    """The report's line for one level's profile: each layer's share, and in engine
    actions a move where CPU per move and the engine's figure are known."""
    if "skipped" in profile:
        return [f"no profile: {profile['skipped']}"]
    per_move = cpu_ms * 1000 / us_per_action if cpu_ms and us_per_action else None
    parts = []
    ranked = sorted(profile["shares"].items(), key=lambda kv: -kv[1])
    for name, share in ranked:
        text = f"{LAYERS[name]} {share * 100:.0f} %"
        if per_move is not None:
            text += f" = {share * per_move:.0f}"
        parts.append(text)
    unit = " (engine actions a move after each share)" if per_move is not None else ""
    return [
        f"where the web processes' CPU went (py-spy, {profile['samples']} samples){unit}: "
        + " · ".join(parts)
    ]
