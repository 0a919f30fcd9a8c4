"""Who is paired with whom, and who never is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db.models import Q

from matches.lobby import matchmaking as queue
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match, QueueEntry
from matches.play.errors import ServiceError
from tests.support import START  # the clock fixture's start

pytestmark = pytest.mark.django_db


def _ranked(*users: Any) -> list[Match]:
    q = Q()
    for u in users:
        q |= Q(player0=u) | Q(player1=u)
    return list(Match.objects.filter(q, kind=Match.Kind.RANKED))


def _in_queue(user: Any) -> bool:
    return QueueEntry.objects.filter(user=user).exists()


def test_two_players_within_100_are_paired_when_the_second_joins(
    alice: Any, bob: Any, rate: Callable[..., None], clock: Any
) -> None:
    rate(alice, 1500)
    rate(bob, 1600)
    assert queue.join(alice).match is None
    m = queue.join(bob).match
    assert m is not None
    assert m.kind == Match.Kind.RANKED and m.status == Match.Status.WAITING
    assert {m.player0_id, m.player1_id} == {alice.pk, bob.pk}
    assert not _in_queue(alice) and not _in_queue(bob)


def test_players_further_apart_wait_until_the_window_has_widened_enough(
    alice: Any, bob: Any, rate: Callable[..., None], clock: Any
) -> None:
    rate(alice, 1500)
    rate(bob, 1740)
    queue.join(alice)
    queue.join(bob)
    for waited in (0, 10, 20):  # ±100, ±150, ±200: not enough for 240
        clock.move_to(START.timestamp() + waited)
        for u in (alice, bob):
            queue.touch(u)  # their lobby sockets are open
        assert queue.sweep() == []
    clock.move_to(START.timestamp() + 30)  # ±250
    made = queue.sweep()
    assert len(made) == 1 and {made[0].player0_id, made[0].player1_id} == {alice.pk, bob.pk}


def test_the_longer_wait_decides_the_window(
    alice: Any, bob: Any, rate: Callable[..., None], clock: Any
) -> None:
    rate(alice, 1500)
    rate(bob, 2500)
    queue.join(alice)
    clock.shift(59)
    queue.touch(alice)  # her lobby socket is open
    assert queue.join(bob).match is None  # alice's ±350 does not reach 1000 apart
    clock.shift(1)
    made = queue.sweep()  # alice has waited a minute: anyone fits
    assert len(made) == 1


def test_nobody_is_paired_with_themselves(alice: Any, clock: Any) -> None:
    queue.join(alice)
    queue.join(alice)
    clock.shift(120)  # her window is unbounded now
    queue.touch(alice)
    assert queue.sweep() == []
    assert _ranked(alice) == []
    assert _in_queue(alice)


def test_a_player_in_a_live_match_cannot_join(alice: Any, bob: Any, clock: Any) -> None:
    inv = create_invite(alice)
    accept_invite(inv.code, bob)
    with pytest.raises(ServiceError) as e:
        queue.join(alice)
    assert e.value.code == "busy"
    assert not _in_queue(alice)


def test_a_queued_player_who_meanwhile_got_a_match_is_never_paired_and_leaves_the_queue(
    alice: Any, bob: Any, carol: Any, clock: Any
) -> None:
    queue.join(alice)
    inv = create_invite(carol)
    accept_invite(inv.code, alice)  # alice now has a (waiting) casual match
    queue.join(bob, pair=False)
    assert queue.sweep() == []
    assert _ranked(alice, bob) == []
    assert not _in_queue(alice)
    assert _in_queue(bob)


def test_the_last_opponent_is_avoided_when_anyone_else_fits(
    alice: Any, bob: Any, carol: Any, rate: Callable[..., None], played: Any, clock: Any
) -> None:
    played(alice, bob)
    rate(alice, 1500)
    rate(bob, 1500)  # the closest rating, yet the one alice just played
    rate(carol, 1580)
    queue.join(alice, pair=False)
    queue.join(bob, pair=False)
    queue.join(carol, pair=False)
    made = queue.sweep()
    assert len(made) == 1
    assert {made[0].player0_id, made[0].player1_id} == {alice.pk, carol.pk}
    assert _in_queue(bob)


def test_the_last_opponent_is_taken_when_nobody_else_fits(
    alice: Any, bob: Any, carol: Any, rate: Callable[..., None], played: Any, clock: Any
) -> None:
    played(alice, bob)
    rate(alice, 1500)
    rate(bob, 1500)
    rate(carol, 1900)  # too far for anyone's window
    queue.join(alice, pair=False)
    queue.join(bob, pair=False)
    queue.join(carol, pair=False)
    made = queue.sweep()
    assert len(made) == 1
    assert {made[0].player0_id, made[0].player1_id} == {alice.pk, bob.pk}
    assert _in_queue(carol)


def test_the_closest_rating_is_preferred(
    alice: Any, bob: Any, carol: Any, rate: Callable[..., None], clock: Any
) -> None:
    rate(alice, 1500)
    rate(bob, 1590)
    rate(carol, 1520)
    for u in (alice, bob, carol):
        queue.join(u, pair=False)
        clock.shift(1)
    made = queue.sweep()
    assert [{m.player0_id, m.player1_id} for m in made] == [{alice.pk, carol.pk}]


def test_leaving_takes_the_player_out_before_anyone_can_pair_them(
    alice: Any, bob: Any, clock: Any
) -> None:
    queue.join(alice)
    assert queue.leave(alice) is True
    assert queue.join(bob).match is None
    assert _ranked(alice, bob) == []
    assert queue.leave(alice) is False


def test_an_entry_is_dropped_30_seconds_after_the_lobby_connection_was_last_seen(
    alice: Any, bob: Any, rate: Callable[..., None], clock: Any
) -> None:
    rate(alice, 1500)
    rate(bob, 2000)
    queue.join(alice)
    queue.join(bob)
    clock.shift(25)
    queue.touch(bob)  # bob's lobby socket is still there
    clock.shift(5.001)
    queue.sweep()
    assert not _in_queue(alice)
    assert _in_queue(bob)
    clock.shift(24.9)  # 29.9 s after bob was last seen
    queue.sweep()
    assert _in_queue(bob)
    clock.shift(0.2)
    queue.sweep()
    assert not _in_queue(bob)


def test_several_pairs_are_made_in_one_sweep(
    alice: Any, bob: Any, carol: Any, dave: Any, clock: Any
) -> None:
    for u in (alice, bob, carol, dave):
        queue.join(u, pair=False)
    made = queue.sweep()
    assert len(made) == 2
    seated = [uid for m in made for uid in (m.player0_id, m.player1_id)]
    assert sorted(seated) == sorted(u.pk for u in (alice, bob, carol, dave))
    assert QueueEntry.objects.count() == 0
