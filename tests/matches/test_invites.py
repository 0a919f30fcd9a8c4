"""Casual invites: create, accept once, cancel, expire after 24 hours."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from matches.lobby.invites import accept_invite, cancel_invite, create_invite, create_same_device
from matches.models import Invite, Match
from matches.play import timing
from matches.play.errors import ServiceError

pytestmark = pytest.mark.django_db


def test_an_invite_is_open_for_24_hours(alice: Any) -> None:
    before = timezone.now()
    inv = create_invite(alice)
    assert inv.status == Invite.Status.OPEN and inv.creator == alice
    assert len(inv.code) >= 12
    assert timedelta(hours=24) <= inv.expires_at - before < timedelta(hours=24, seconds=5)


def test_accepting_an_invite_makes_a_casual_match_waiting_for_start(alice: Any, bob: Any) -> None:
    inv = create_invite(alice)
    m = accept_invite(inv.code, bob)
    assert m.kind == Match.Kind.CASUAL and m.status == Match.Status.WAITING
    assert (m.player0, m.player1) == (alice, bob)
    assert m.seats_of(alice.pk) == [0] and m.seats_of(bob.pk) == [1]
    assert m.ready == [False, False]
    assert m.ready_deadline_ms is not None
    assert abs(m.ready_deadline_ms - timing.now_ms() - 60_000) < 5_000
    inv.refresh_from_db()
    assert inv.status == Invite.Status.ACCEPTED
    assert inv.accepted_by == bob and inv.match == m


def test_nobody_can_accept_their_own_invite(alice: Any) -> None:
    inv = create_invite(alice)
    with pytest.raises(ServiceError) as e:
        accept_invite(inv.code, alice)
    assert e.value.code == "own_invite"
    assert Match.objects.count() == 0


def test_an_invite_cannot_be_accepted_twice(alice: Any, bob: Any, outsider: Any) -> None:
    inv = create_invite(alice)
    accept_invite(inv.code, bob)
    for who in (outsider, bob):
        with pytest.raises(ServiceError) as e:
            accept_invite(inv.code, who)
        assert e.value.code == "invite_taken"
    assert Match.objects.count() == 1


def test_a_cancelled_invite_cannot_be_accepted(alice: Any, bob: Any) -> None:
    inv = create_invite(alice)
    cancel_invite(inv.code, alice)
    with pytest.raises(ServiceError) as e:
        accept_invite(inv.code, bob)
    assert e.value.code == "invite_closed"
    assert Match.objects.count() == 0


def test_only_its_creator_can_cancel_an_invite(alice: Any, bob: Any) -> None:
    inv = create_invite(alice)
    with pytest.raises(ServiceError) as e:
        cancel_invite(inv.code, bob)
    assert e.value.code == "forbidden"
    inv.refresh_from_db()
    assert inv.status == Invite.Status.OPEN


def test_an_accepted_invite_cannot_be_cancelled(alice: Any, bob: Any) -> None:
    inv = create_invite(alice)
    accept_invite(inv.code, bob)
    with pytest.raises(ServiceError) as e:
        cancel_invite(inv.code, alice)
    assert e.value.code == "invite_closed"


def test_an_invite_expires_after_24_hours(alice: Any, bob: Any) -> None:
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        inv = create_invite(alice)
    with time_machine.travel(start + timedelta(hours=24) - timedelta(seconds=1), tick=False):
        assert not Invite.objects.get(pk=inv.pk).expired
    with time_machine.travel(start + timedelta(hours=24), tick=False):
        with pytest.raises(ServiceError) as e:
            accept_invite(inv.code, bob)
        assert e.value.code == "invite_expired"
    assert Match.objects.count() == 0
    inv.refresh_from_db()
    assert inv.status == Invite.Status.OPEN and inv.match is None


def test_an_unknown_invite_code_is_not_found(bob: Any) -> None:
    with pytest.raises(ServiceError) as e:
        accept_invite("no-such-code", bob)
    assert e.value.code == "not_found"


def test_accepting_an_invite_takes_both_players_out_of_the_ranked_queue(
    alice: Any, bob: Any
) -> None:
    from matches.lobby import matchmaking as queue
    from matches.models import QueueEntry

    queue.join(alice, pair=False)
    queue.join(bob, pair=False)
    assert QueueEntry.objects.count() == 2
    inv = create_invite(alice)
    accept_invite(inv.code, bob)
    # Otherwise the next pairing could put them into a second, ranked match.
    assert QueueEntry.objects.count() == 0


def test_starting_a_same_device_match_leaves_the_ranked_queue(alice: Any) -> None:
    from matches.lobby import matchmaking as queue
    from matches.models import QueueEntry

    queue.join(alice, pair=False)
    create_same_device(alice, "Dave")
    assert not QueueEntry.objects.filter(user=alice).exists()
