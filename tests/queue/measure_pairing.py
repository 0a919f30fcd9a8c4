"""How long pairing two waiting players takes (not a test: run it, read the figures).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spectacular \\
        .venv/bin/python tests/queue/measure_pairing.py [pairings]

Makes a throw-away database (``measure_pairing_<pid>``, dropped at the end),
then for each pairing: one player is waiting, the second joins, and it times

- **pair**: ``queue.pair_waiting()`` alone, with both already queued
  (the locked transaction: lock entries, check, create the match, commit);
- **join → paired**: the second player's ``queue.join`` until both players'
  lobby channels hold the ``queue.paired`` message (join transaction, pairing
  transaction, and the pushes through the channel layer).

Prints p50 / p90 / max in milliseconds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def _ms(samples: list[float]) -> str:
    s = sorted(samples)
    p90 = s[max(0, int(len(s) * 0.9) - 1)]
    return f"p50 {statistics.median(s):6.2f} ms   p90 {p90:6.2f} ms   max {s[-1]:6.2f} ms"


async def _measure(pairings: int) -> tuple[list[float], list[float]]:
    # One event loop for everything: the pushes (async_to_sync in the service
    # threads) then share it with the receiving side, as in a Daphne process.
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer
    from django.contrib.auth import get_user_model

    from matches.lobby import matchmaking as queue

    users = get_user_model()
    layer = get_channel_layer()
    make = sync_to_async(users.objects.create_user)
    join = sync_to_async(queue.join)
    pair_only: list[float] = []
    end_to_end: list[float] = []
    for i in range(pairings):
        a, b = await make(f"pa{i}"), await make(f"pb{i}")
        await join(a, pair=False)
        await join(b, pair=False)
        t0 = time.perf_counter()
        made = await sync_to_async(queue.pair_waiting)()
        pair_only.append((time.perf_counter() - t0) * 1000)
        assert len(made) == 1

        c, d = await make(f"pc{i}"), await make(f"pd{i}")
        channels = {}
        for u in (c, d):
            channels[u.pk] = await layer.new_channel()
            await layer.group_add(queue.lobby_group(u.pk), channels[u.pk])
        await join(c)
        t0 = time.perf_counter()
        result = await join(d)
        for u in (c, d):
            while (await layer.receive(channels[u.pk]))["type"] != "queue.paired":
                pass
        end_to_end.append((time.perf_counter() - t0) * 1000)
        assert result.match is not None
    from django.db import connections

    await sync_to_async(connections.close_all)()  # the service thread's connection
    return pair_only, end_to_end


def main(pairings: int) -> None:
    import django

    django.setup()
    from channels.layers import get_channel_layer
    from django.conf import settings
    from django.db import connection

    settings.MATCH_BACKGROUND = False
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = f"measure_pairing_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        pair_only, end_to_end = asyncio.run(_measure(pairings))
        layer = type(get_channel_layer()).__name__
        db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        print(f"{pairings} pairings on {db}, channel layer {layer}:")
        print(f"  pair (both waiting)   {_ms(pair_only)}")
        print(f"  join -> both paired   {_ms(end_to_end)}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
