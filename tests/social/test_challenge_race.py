"""Accepting one challenge twice at once, on the real PostgreSQL: exactly one match.

Each thread has its own connection, so these are concurrent committed
transactions, as two tabs (or two processes) pressing Accept together make them.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from matches.models import Match
from matches.play.errors import ServiceError
from social import challenges
from social.models import Challenge

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]

THREADS = 8


def test_eight_accepts_at_once_make_one_match(alice: Any, bob: Any) -> None:
    ch = challenges.create(alice, "bob")
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = ("ok", challenges.accept(ch.pk, bob).pk)
        except ServiceError as e:
            results[i] = ("error", e.code)
        except Exception as e:
            results[i] = ("crash", repr(e))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    oks = [r for r in results if r[0] == "ok"]
    assert len(oks) == 1, results
    assert sorted(r[1] for r in results if r[0] == "error") == ["challenge_taken"] * (THREADS - 1)
    assert Match.objects.count() == 1
    assert Challenge.objects.get(pk=ch.pk).match_id == oks[0][1]
