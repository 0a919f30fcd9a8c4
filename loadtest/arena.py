"""``python -m loadtest.arena`` (``make bench-arena``): one arena full of bots.

The embedded default is started as ``make run`` starts it (loadtest.setups);
``--players`` bots (users and sessions bulk-made, loadtest.accounts) join one
arena over HTTP, each keeps the arena socket open (/ws/tournaments/<id>/, its
presence) and plays every match the arena pairs it into with the load harness's
own bots (loadtest.bots: one JSON seat, one HTML seat, thinking ``--think``
seconds a decision); while it plays, its arena socket is the match page's bar's
(``?bar=1``), as a browser's is. After ``--seconds`` of that, the arena players withdraw and
the same number of players play ordinary invite matches for as long, as the
baseline. Prints, asserts nothing:

- the standings push rate per socket (frames a second: mean, and the most any
  socket got in one second — the throttle's promise is about 1);
- matches the arena made, and the move latency (sent → the opponent's socket has
  the new version) with the arena and without it, p50 / p95 / p99.

The pairing pass's own time at 500 players is measured in-process by
``python -m tournaments.bench`` (the first half of ``make bench-arena``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from . import goals, probes, report
from .bots import Account, Behaviour, Bot, Fleet, Recorder, Socket, Table, wait_until
from .report import pct
from .setups import PY, ROOT, Embedded


class ArenaTable(Table):
    """A match the arena made: no invite, the match id is given; played once."""

    def __init__(self, bench: Bench, a: Account, b: Account, match_id: int) -> None:
        super().__init__(
            bench.fleet, a, b, Behaviour(think=bench.think, replace=False), random.Random()
        )
        self.bench = bench
        self.match_id = match_id

    async def run(self) -> None:
        self.matches = 1
        html_seat = self.rng.randrange(2)
        self.bots = [Bot(self, s, self.accounts[s], html=s == html_seat) for s in (0, 1)]
        self.status = "playing"
        for bot in self.bots:
            bot.start()
        await self.done.wait()
        await wait_until(lambda: all(b.seen is not None and b.seen.over for b in self.bots), 2.0)
        await self.close_bots()
        for acct in self.accounts:  # back to the arena's page
            await self.bench.swap(acct, bar=False)


class ArenaSocket(Socket):
    """A player's arena socket: counts standings frames, hands pairings to the bench.

    ``bar``: the arena bar's socket on a match's page (``?bar=1``: no standings)."""

    def __init__(self, bench: Bench, acct: Account, *, bar: bool = False) -> None:
        super().__init__(bench.fleet.ws, bench.fleet.base, acct, bench.rec)
        self.bench = bench
        self.bar = bar
        self.standings: list[float] = []
        self.span = [time.monotonic(), float("inf")]  # when it was open

    def url(self) -> str:
        bar = "?bar=1" if self.bar else ""
        return f"{self.bench.fleet.ws_base}/ws/tournaments/{self.bench.arena_id}/{bar}"

    async def close(self) -> None:
        self.span[1] = time.monotonic()
        await super().close()

    def on_text(self, text: str, at: float) -> None:
        frame = json.loads(text)
        if frame.get("type") == "standings":
            self.standings.append(at)
        elif frame.get("type") == "paired":
            self.bench.paired(self.acct, int(frame["match_id"]))


class Bench:
    def __init__(self, base: str, accounts: list[Account], arena_id: int, think: Any) -> None:
        self.rec = Recorder()
        self.fleet = Fleet(base, accounts, self.rec)
        self.arena_id = arena_id
        self.think = think
        self.sockets: list[ArenaSocket] = []  # every one opened
        self.current: dict[str, ArenaSocket] = {}  # each player's open one
        self.seats: dict[int, dict[str, Account]] = defaultdict(dict)
        self.tables: list[ArenaTable] = []
        self.playing = True

    def paired(self, acct: Account, match_id: int) -> None:
        self.seats[match_id][acct.username] = acct
        if len(self.seats[match_id]) == 2 and self.playing:
            self.fleet.background(self._start(match_id))
        if self.playing:  # the page goes to the match: its bar's socket takes over
            self.fleet.background(self.swap(acct, bar=True))

    async def swap(self, acct: Account, *, bar: bool) -> None:
        old = self.current.get(acct.username)
        if old is not None and old.bar == bar or not self.playing:
            return
        s = ArenaSocket(self, acct, bar=bar)
        self.current[acct.username] = s
        self.sockets.append(s)
        s.start()
        if old is not None:
            await old.close()

    async def _start(self, match_id: int) -> None:
        players = self.seats[match_id]
        any_acct = next(iter(players.values()))
        async with self.fleet.http.get(
            f"{self.fleet.base}/api/matches/{match_id}/state/",
            headers={"Cookie": f"sessionid={any_acct.sessionid}"},
        ) as r:
            names = (await r.json())["view"]["match"]["names"]
        t = ArenaTable(self, players[names[0]], players[names[1]], match_id)
        t.task = asyncio.ensure_future(t.run())
        self.tables.append(t)

    async def join_all(self) -> None:
        for acct in self.fleet.free:
            await self.fleet.api.post(acct, f"/api/tournaments/{self.arena_id}/join/")
            await self.swap(acct, bar=False)

    async def withdraw_all(self) -> None:
        self.playing = False
        for s in self.current.values():
            await self.fleet.api.post(s.acct, f"/api/tournaments/{self.arena_id}/withdraw/")
        await asyncio.gather(*(t.stop() for t in self.tables), return_exceptions=True)
        for s in self.current.values():
            await s.close()


def _create_arena(env: dict[str, str]) -> int:
    code = (
        "from datetime import timedelta; from django.utils import timezone; "
        "from tournaments.services import create_arena; "
        "print(create_arena('bench', 60, timezone.now() - timedelta(seconds=5), False).pk)"
    )
    out = subprocess.run(
        [PY, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def _latency(rec: Recorder, t0: float, t1: float) -> str:
    lat = [m.latency_ms for m in rec.moves if t0 <= m.received < t1]
    if not lat:
        return "no moves"
    p50, p95, p99 = (pct(lat, p) for p in (50, 95, 99))
    return f"{len(lat)} moves, p50 {p50:.0f} ms, p95 {p95:.0f} ms, p99 {p99:.0f} ms"


def _push_rate(sockets: list[ArenaSocket], t0: float, t1: float) -> str:
    """Standings frames a second per arena page's socket, over the time each was open."""
    frames, open_s, most, bar_frames = 0, 0.0, 0, 0
    for s in sockets:
        seen = [t for t in s.standings if t0 <= t < t1]
        if s.bar:
            bar_frames += len(seen)
            continue
        frames += len(seen)
        open_s += max(0.0, min(t1, s.span[1]) - max(t0, s.span[0]))
        if seen:
            most = max(most, max(Counter(int(t - t0) for t in seen).values()))
    mean = frames / open_s if open_s else 0.0
    return (
        f"{mean:.2f} frames/s per arena page's socket (mean over the time each was open), "
        f"at most {most} in any one second; {bar_frames} to the match pages' bars"
    )


async def run(
    players: int, seconds: float, think: tuple[float, float], settle: float = 20.0
) -> None:
    setup = Embedded()
    print(f"starting the embedded default ({setup.base}) ...", file=sys.stderr, flush=True)
    setup.start()
    try:
        made = setup.create_accounts(players * 2, prefix="arenabot")
        accounts = [Account(u, k) for u, k in made]
        arena_id = _create_arena(setup.env)
        bench = Bench(setup.base, accounts[:players], arena_id, think)
        # The yardsticks of this machine, now: the echo relay on the idle server.
        echo = report.summary(
            await probes.echo(bench.fleet.ws, setup.base, accounts[-2], accounts[-1], 100)
        )
        await bench.join_all()
        t0 = time.monotonic()
        await asyncio.sleep(seconds)  # the arena runs: this is the measured window
        t1 = time.monotonic()
        arena_matches = len(bench.tables)
        await bench.withdraw_all()
        await bench.fleet.close()

        base_rec = Recorder()
        fleet = Fleet(setup.base, accounts[players:], base_rec)
        await fleet.scale(players // 2, Behaviour(think=think), timeout=60)
        b0 = time.monotonic()
        await asyncio.sleep(seconds)
        b1 = time.monotonic()
        await fleet.close()
    finally:
        setup.stop()
    print(
        f"\nmake bench-arena: {players} players, {seconds:.0f} s, bots thinking "
        f"{think[0]:g}-{think[1]:g} s (embedded default)"
    )
    print(
        f"  this machine now: the engine {goals.engine_us_per_action():.1f} µs per applied "
        f"action (make bench's measure); the echo relay (idle) p50 {echo['p50']:.1f} ms"
    )
    print(f"  arena matches made: {arena_matches}")
    print(f"  standings pushes: {_push_rate(bench.sockets, t0, t1)}")
    print(f"  moves with the arena:    {_latency(bench.rec, t0, t1)}")
    # The arena's first pass seats everyone at once (a wave of ~2 handshakes a player);
    # the invite baseline is measured only once its matches are up: compare like with like.
    print(f"    after its first {settle:.0f} s:   {_latency(bench.rec, t0 + settle, t1)}")
    print(f"  moves without (invites): {_latency(base_rec, b0, b1)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="One arena full of bots (make bench-arena).")
    ap.add_argument("--players", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--think", default="1-4", help="seconds a bot thinks a decision: LO-HI")
    ap.add_argument("--settle", type=float, default=20.0, help="s the first pass's wave takes")
    args = ap.parse_args(argv)
    lo, _, hi = args.think.partition("-")
    asyncio.run(run(args.players, args.seconds, (float(lo), float(hi or lo)), args.settle))


if __name__ == "__main__":
    main()
