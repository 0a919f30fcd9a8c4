"""Concurrent joins on real PostgreSQL: nobody ever lands in two matches."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q

from matches.lobby import matchmaking as queue
from matches.lobby import rematch
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match, QueueEntry
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]

JOIN_TIMEOUT_S = 60


def _run_at_once(jobs: list[Callable[[], Any]]) -> list[BaseException]:
    """Start every job on its own thread at the same moment; the errors they raised."""
    barrier = threading.Barrier(len(jobs))
    errors: list[BaseException] = []

    def run(job: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            job()
        except BaseException as e:  # reported by the test
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT_S)
        assert not t.is_alive(), "a join hung"
    return errors


def _players(prefix: str, n: int) -> list[Any]:
    model = get_user_model()
    return [model.objects.create_user(f"{prefix}{i}") for i in range(n)]


def _seatings(users: list[Any]) -> Counter[int]:
    ids = [u.pk for u in users]
    seats: Counter[int] = Counter()
    for p0, p1 in Match.objects.filter(Q(player0_id__in=ids) | Q(player1_id__in=ids)).values_list(
        "player0_id", "player1_id"
    ):
        seats[p0] += 1
        seats[p1] += 1
    return seats


@pytest.mark.parametrize("round_no", range(4))
def test_concurrent_joins_and_sweeps_put_each_player_in_at_most_one_match(round_no: int) -> None:
    users = _players(f"r{round_no}p", 16)
    jobs: list[Callable[[], Any]] = [lambda u=u: queue.join(u) for u in users]
    jobs += [queue.sweep] * 4
    assert _run_at_once(jobs) == []
    queue.sweep()  # whoever two racing pairings left behind
    seats = _seatings(users)
    assert max(seats.values()) == 1
    left = QueueEntry.objects.filter(user__in=users).count()
    assert left + sum(seats.values()) == len(users)
    assert left == 0
    for m in Match.objects.filter(player0__in=users):
        assert m.player0_id != m.player1_id
        assert m.kind == Match.Kind.RANKED


def test_the_same_player_joining_from_two_tabs_at_once_is_queued_once(alice: Any) -> None:
    assert _run_at_once([lambda: queue.join(alice)] * 6) == []
    assert QueueEntry.objects.filter(user=alice).count() == 1


def test_a_player_accepting_a_rematch_while_being_paired_ends_up_in_one_match(
    alice: Any, bob: Any, carol: Any
) -> None:
    inv = create_invite(alice)
    old = accept_invite(inv.code, bob)
    act(old.pk, alice, {"op": "resign", "version": old.version}, timing.now_ms())
    rematch.act_rematch(old.pk, alice, "rematch")
    queue.join(bob, pair=False)  # bob queued up meanwhile; carol is about to
    queue.join(carol, pair=False)

    def accept() -> None:
        try:
            rematch.act_rematch(old.pk, bob, "rematch_accept")
        except ServiceError as e:
            assert e.code == "busy"

    assert _run_at_once([accept, queue.sweep, queue.sweep]) == []
    queue.sweep()
    waiting = Match.objects.filter(status=Match.Status.WAITING)
    for user in (alice, bob, carol):
        assert waiting.filter(Q(player0=user) | Q(player1=user)).count() <= 1
    assert waiting.filter(Q(player0=bob) | Q(player1=bob)).count() == 1
    assert not QueueEntry.objects.filter(user=bob).exists()
