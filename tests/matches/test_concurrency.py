"""Races on the real PostgreSQL: the row lock lets exactly one of many identical requests through.

Each thread has its own database connection (Django's are per thread), so
these are real concurrent transactions, committed, as two Daphne processes or
a double-clicking client would make them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from matchplay import Table, frame_for, in_phase, new_casual, play_to

import engine
from matches.clock.deadlines import check_match
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Invite, Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]

THREADS = 20
_start = {"op": "start", "version": 0}


def _race(n: int, work: Callable[[int], Any]) -> list[tuple[str, Any]]:
    """Run ``work(i)`` in ``n`` threads released at once; ("ok", value) or ("error", code)."""
    barrier = threading.Barrier(n)
    results: list[tuple[str, Any]] = [("missing", None)] * n

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = ("ok", work(i))
        except ServiceError as e:
            results[i] = ("error", e.code)
        except Exception as e:  # reported in the results
            results[i] = ("crash", repr(e))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in threads)
    return results


def test_twenty_copies_of_one_move_apply_exactly_once(alice: Any, bob: Any, settings: Any) -> None:
    settings.DEAL_SEED = 9
    table = Table(new_casual(alice, bob), [alice, bob])
    t = timing.now_ms()
    table.start(t)
    s = table.state
    assert s is not None and s.to_act is not None
    action = engine.legal_actions(s)[0]
    frame = frame_for(action, table.version)
    user = table.users[action.player]
    version = table.version
    places = MatchEvent.objects.filter(match_id=table.match_id, kind="place").count()

    results = _race(THREADS, lambda i: act(table.match_id, user, frame, t + 1_000 + i))

    codes = sorted(r[1] if r[0] == "error" else r[0] for r in results)
    assert codes == ["ok"] + ["stale"] * (THREADS - 1), results
    table.refresh()
    assert table.version == version + 1
    after = MatchEvent.objects.filter(match_id=table.match_id, kind="place").count()
    forced_places = sum(
        1
        for e in MatchEvent.objects.filter(
            match_id=table.match_id, kind="place", version=version + 1
        )
        if e.data.get("forced")
    )
    assert after - places - forced_places == 1
    new = table.state
    assert new is not None and action.tile not in new.hands[action.player]


def test_two_concurrent_accepts_of_one_invite_make_one_match(
    alice: Any, bob: Any, outsider: Any
) -> None:
    inv = create_invite(alice)
    takers = [bob, outsider]

    results = _race(2, lambda i: accept_invite(inv.code, takers[i]).pk)

    assert sorted(r[0] for r in results) == ["error", "ok"], results
    assert [r[1] for r in results if r[0] == "error"] == ["invite_taken"]
    assert Match.objects.count() == 1
    inv.refresh_from_db()
    assert inv.status == Invite.Status.ACCEPTED
    winner = next(takers[i] for i, r in enumerate(results) if r[0] == "ok")
    assert inv.accepted_by == winner and inv.match_id == results[takers.index(winner)][1]


def test_many_concurrent_accepts_of_one_invite_make_one_match(
    alice: Any, django_user_model: Any
) -> None:
    inv = create_invite(alice)
    takers = [django_user_model.objects.create_user(f"taker{i}") for i in range(10)]

    results = _race(10, lambda i: accept_invite(inv.code, takers[i]).pk)

    assert sorted(r[0] for r in results) == ["error"] * 9 + ["ok"], results
    assert Match.objects.count() == 1


def test_both_players_pressing_start_at_once_deal_one_hand(alice: Any, bob: Any) -> None:
    table = Table(new_casual(alice, bob), [alice, bob])
    t = timing.now_ms()

    results = _race(2, lambda i: act(table.match_id, table.users[i], _start, t).error)

    assert results == [("ok", None), ("ok", None)], results
    table.refresh()
    assert table.match.status == Match.Status.LIVE
    kinds = list(MatchEvent.objects.filter(match_id=table.match_id).values_list("kind", flat=True))
    assert kinds.count("started") == 1 and kinds.count("deal") == 1
    assert kinds.count("ready") == 2


def test_both_players_pressing_continue_at_once_deal_one_next_hand(
    alice: Any, bob: Any, settings: Any
) -> None:
    table = Table(new_casual(alice, bob), [alice, bob])
    _, t = play_to(table, in_phase(engine.HAND_OVER), settings=settings)
    hand = table.state.hand_no if table.state else -1
    frame = {"op": "continue", "version": table.version}

    results = _race(2, lambda i: act(table.match_id, table.users[i], frame, t).error)

    assert results == [("ok", None), ("ok", None)], results
    table.refresh()
    s = table.state
    assert s is not None and s.hand_no == hand + 1
    deals = MatchEvent.objects.filter(match_id=table.match_id, kind="deal")
    assert [e.data["hand"] for e in deals] == list(range(hand + 2))


def test_a_move_racing_its_deadline_backstop_is_judged_by_its_receipt_time(
    alice: Any, bob: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 9
    table = Table(new_casual(alice, bob), [alice, bob])
    table.start(timing.now_ms())
    s = table.state
    assert s is not None and s.to_act is not None
    deadline = engine.deadline(s)
    assert deadline is not None
    action = engine.legal_actions(s)[0]
    frame = frame_for(action, table.version)
    version = table.version

    def work(i: int) -> Any:
        if i == 0:
            return act(table.match_id, table.users[action.player], frame, deadline - 1)
        return check_match(table.match_id, version, now=deadline + 100)

    results = _race(2, work)

    table.refresh()
    moved, backstop = results
    if moved == ("error", "match_over"):
        # The backstop took the lock first: the match ended on time, the move was refused.
        assert backstop == ("ok", True)
        assert table.match.end_reason == "time"
    else:
        # The move took the lock first: it counts, and the backstop found a newer version.
        assert moved[0] == "ok" and moved[1].error is None, results
        assert backstop == ("ok", False)
        assert table.match.status == Match.Status.LIVE
        assert table.version == version + 1
