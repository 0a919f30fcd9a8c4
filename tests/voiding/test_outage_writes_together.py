"""An outage given back to every open match writes them all in one round trip.

A restart of the whole web tier gives the outage back to every open match before the
first process listens, every match's row locked until it commits: a round trip per
statement (two a match) took 2.3 s at 463 matches in the drill on a loaded machine,
and 5.8 s for the second process's credit. The changes now go together
(``matches.play.store.writes_together``): each match is credited as before, each
change is published after the commit, and the database is waited for a handful of
times, however many matches there are.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

import engine
from matches.clock import outage
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.store import save_change, writes_together
from tests.support import capture_changes, database_waits, live_casual, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]

MATCHES = 12


def test_every_match_is_credited_in_a_handful_of_round_trips_and_pushed_after(
    settings: Any,
) -> None:
    settings.DEAL_SEED = 4
    matches = [
        live_casual(make_user(f"p{i}a", None), make_user(f"p{i}b", None)) for i in range(MATCHES)
    ]
    before = {m.pk: (m.version, engine.from_dict(m.state)) for m in matches}
    start = timing.now_ms()
    end = start + 3_000
    with capture_changes() as pushed:
        credited, waits = database_waits(lambda: outage.credit_outage(start, end))
    assert sorted(credited) == sorted(before)
    # The lock of every match, the late pushes' read, the writes, the commit: not two
    # round trips a match (24 here) as before.
    assert len(waits) <= 6, waits
    for m in Match.objects.filter(pk__in=before):
        version, state = before[m.pk]
        assert m.version == version + 1
        after = engine.from_dict(m.state)
        # The seat to act's decision now starts 3 s later: the outage is its own again.
        assert after.decision_start == state.decision_start + 3_000
        kinds = list(
            MatchEvent.objects.filter(match_id=m.pk, version=m.version).values_list(
                "kind", flat=True
            )
        )
        assert kinds == ["credit"]
    # Each change published once, after the commit, with the version it wrote.
    assert sorted((c.match_id, c.version) for c in pushed) == sorted(
        (pk, v + 1) for pk, (v, _) in before.items()
    )


def test_a_change_is_written_as_it_was_saved_whatever_happens_to_the_match_after(
    alice: Any, bob: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 4
    m = live_casual(alice, bob)
    with transaction.atomic(), writes_together():
        m.last_credit = {"ms": 100, "seat": None, "to": 1}
        save_change(m, engine.from_dict(m.state), [{"type": "credit", "t": 1, "ms": 100}])
        m.last_credit["ms"] = 999  # changed in place after its save, before the batch goes
        saved_version = m.version
        m.version += 5  # and not saved again
    m.refresh_from_db()
    assert m.last_credit == {"ms": 100, "seat": None, "to": 1}
    assert m.version == saved_version
