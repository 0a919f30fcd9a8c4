"""The CPU the match page's fragments cost per move: prints figures, asserts nothing.

Every state of a few seeded engine matches is rendered with ``render.render_changed``
for the three audiences a move reaches (both seats and a spectator), each with its
own ``sent`` record as a socket keeps it, in Japanese; the figure is
``time.process_time()`` per move (all three) and per socket.

    .venv/bin/python tests/ui/measure_render.py [seeds]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "ui")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.utils import translation  # noqa: E402
from ui_scenarios import random_match, seat_view  # noqa: E402

import engine  # noqa: E402
from matches.ui import board_svg  # noqa: E402
from matches.ui import fragments as render  # noqa: E402

RECENT_EVENTS = engine.LOG_SIZE  # what a socket keeps (matches/realtime/match_consumer.py)
RATINGS = [{"value": 1520, "display": "1520?"}, {"value": 1480, "display": "1480"}]


def moves(seeds: range) -> list[list[dict[str, Any]]]:
    """Per state of each seeded match, the views of seat 0, seat 1 and a spectator."""
    out = []
    for seed in seeds:
        for s, now in random_match(seed):
            per = []
            for seat in (0, 1, None):
                v = seat_view(s, seat, now, kind="ranked")
                v["match"].update(watching=seat is None, ratings=RATINGS, rating_delta=None)
                v["events"] = v["events"][-RECENT_EVENTS:]
                per.append(v)
            out.append(per)
    return out


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    views = moves(range(seeds))
    with translation.override("ja"):
        for per in moves(range(100, 102)):  # templates compiled, caches warm
            for v in per:
                render.render_changed(v, {})
        board_svg._board_fragment.cache_clear()
        sent: list[dict[str, str]] = [{}, {}, {}]
        start = time.process_time()
        for per in views:
            for i, v in enumerate(per):
                render.render_changed(v, sent[i])
        spent = time.process_time() - start
    per_move = spent * 1000 / len(views)
    print(
        f"render_changed: {per_move:.2f} ms CPU per move for 3 audiences "
        f"({per_move / 3:.2f} ms per socket), {len(views)} moves of {seeds} matches"
    )


if __name__ == "__main__":
    main()
