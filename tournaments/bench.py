"""The arena pairing pass at scale: ``python -m tournaments.bench [--players 500]``.

Run by ``make bench-arena`` (before its live part, loadtest/arena.py) against the
database in ``DATABASE_URL`` — a scratch one: it migrates it, makes
``arenabench*`` users, one arena and its entries, and deletes them all at the
end. Prints, asserts nothing. Three figures, each the median (and worst) of
several passes:

- **steady**: 500 players, most of them playing, 0, 8 or 40 waiting — what a
  pass meets every 2 s in a running arena (matches of a few minutes end at
  about 1–2 a second among 500 players: a pass finds ~4–8 waiting);
- **start**: all 500 waiting at once (the arena's first pass: 250 matches);
- **choose**: the in-memory choice alone over 500 waiting players;

and the standings push: the time to build the table and its size, whole and as
one socket gets it (top rows + its own).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from datetime import timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def _setup() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _timed(fn: Any, runs: int, reset: Any = None) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(runs):
        if reset is not None:
            reset()
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times), out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=500)
    ap.add_argument("--waiting", type=int, default=40, help="the most waiting in a steady pass")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    _setup()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from matches.models import Match
    from matches.play import seating
    from tournaments import consumers, services, standings
    from tournaments.models import Entry, Pairing
    from tournaments.pairing import Waiting, choose_pairs

    User = get_user_model()  # noqa: N806
    n = args.players
    User.objects.filter(username__startswith="arenabench").delete()
    User.objects.bulk_create([User(username=f"arenabench{i:04d}") for i in range(n)])
    users = list(User.objects.filter(username__startswith="arenabench").order_by("id"))
    arena = services.create_arena("bench", 60, timezone.now() - timedelta(minutes=5), False)
    Entry.objects.bulk_create(
        [
            Entry(arena=arena, user=u, rating=1200 + (i * 37) % 600, points=(i * 7) % 23)
            for i, u in enumerate(users)
        ]
    )
    # The players not waiting sit in one placeholder match (the pass only skips them).
    holder = seating.new_match(Match.Kind.CASUAL, users[0], users[1])
    baseline = set(Match.objects.values_list("pk", flat=True))

    def reset(waiting: int) -> Any:
        def go() -> None:
            made = Match.objects.exclude(pk__in=baseline)
            Pairing.objects.filter(arena=arena).delete()
            made.delete()
            Entry.objects.filter(arena=arena).update(current_match=holder, free_at=None)
            ids = [u.pk for u in users[2 : 2 + waiting]]
            Entry.objects.filter(arena=arena, user_id__in=ids).update(
                current_match=None, last_seen=timezone.now(), state=Entry.State.ACTIVE
            )

        return go

    def one_pass() -> Any:
        return services.pair_arena(arena.pk)

    from loadtest.goals import engine_us_per_action

    us = engine_us_per_action()
    print(f"Arena pairing pass, {n} players, {connection.vendor}, median (worst) of runs")
    print(f"  (this machine now: the engine {us:.1f} µs per applied action, make bench's measure)")
    for w in sorted({0, 8, args.waiting}):
        med, worst, res = _timed(one_pass, args.runs, reset(w))
        print(
            f"  steady: {w} waiting → {len(res.paired)} matches: "
            f"{med:.1f} ms ({worst:.1f})  [choosing {res.choose_ms:.2f} ms]"
        )
    full = min(n - 2, n - n % 2)
    med, worst, res = _timed(one_pass, max(2, args.runs // 2), reset(full))
    print(f"  start: {full} waiting → {len(res.paired)} matches: {med:.0f} ms ({worst:.0f})")
    waiting = [Waiting(u.pk, i + 1, users[(i + 1) % n].pk) for i, u in enumerate(users)]
    med, worst, _ = _timed(lambda: choose_pairs(waiting), 20)
    print(f"  choose (in memory): {n} waiting: {med:.2f} ms ({worst:.2f})")

    def build() -> dict[str, Any]:  # a new version's table (a page open at the same
        standings._by_version.clear()  # version reads the one kept: not measured here)
        return standings.table(arena.pk)

    med, worst, table = _timed(build, args.runs)
    whole = len(json.dumps(table).encode())
    one = len(json.dumps(consumers.cut(table, users[-1].username)).encode())
    print(
        f"  standings push: built in {med:.1f} ms ({worst:.1f}); {whole / 1024:.0f} KiB to the "
        f"layer once, {one / 1024:.1f} KiB to each socket, at most 1 a second"
    )
    reset(0)()
    holder.delete()
    arena.delete()
    User.objects.filter(username__startswith="arenabench").delete()


if __name__ == "__main__":
    main()
