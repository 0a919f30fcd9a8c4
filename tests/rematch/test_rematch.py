"""Rematch at the end of a match: offer, accept, decline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from matches.lobby import matchmaking as queue
from matches.lobby import rematch
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match, MatchEvent, QueueEntry
from matches.play.act import Outcome
from matches.play.errors import ServiceError
from matches.play.store import current_view
from matches.signals import queue_left
from tests.support import START, capture_changes  # START: the clock fixture's start

pytestmark = pytest.mark.django_db

Frame = Callable[[Match, Any, str], Outcome]


def _block(m: Match, user: Any) -> dict[str, Any]:
    _, view = current_view(m.pk, user)
    return view["match"]["rematch"]


def _seat(m: Match, user: Any) -> int:
    return m.seats_of(user.pk)[0]


def test_an_accepted_rematch_of_a_ranked_match_is_ranked_with_the_seats_swapped(
    alice: Any, bob: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.RANKED)
    frame(old, old.player0, "rematch")
    frame(old, old.player1, "rematch_accept")
    block = _block(old, alice)
    assert block["status"] == "accepted" and block["new_match"] is not None
    new = Match.objects.get(pk=block["new_match"])
    assert new.kind == Match.Kind.RANKED and new.status == Match.Status.WAITING
    assert (new.player0_id, new.player1_id) == (old.player1_id, old.player0_id)
    assert _block(old, bob) == block


def test_the_view_shows_an_open_offer_to_both_players(
    alice: Any, bob: Any, finished: Any, frame: Frame, clock: Any
) -> None:
    old = finished(Match.Kind.CASUAL)
    assert _block(old, alice)["status"] == "none"
    frame(old, alice, "rematch")
    for user in (alice, bob):
        block = _block(old, user)
        assert block["status"] == "open"
        assert block["offered_by"] == _seat(old, alice)
        assert block["declined"] is False and block["new_match"] is None
        assert block["expires_at"] == int(START.timestamp() * 1000) + 120_000


def test_a_decline_is_shown_to_the_one_who_offered(
    alice: Any, bob: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, bob, "rematch")
    frame(old, alice, "rematch_decline")
    block = _block(old, bob)
    assert block["status"] == "declined" and block["declined"] is True
    assert block["offered_by"] == _seat(old, bob) == current_view(old.pk, bob)[1]["match"]["you"]
    assert block["new_match"] is None
    with pytest.raises(ServiceError) as e:
        frame(old, bob, "rematch")
    assert e.value.code == "rematch_closed"


def test_both_offering_at_once_makes_one_match(
    alice: Any, bob: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    frame(old, bob, "rematch")
    frame(old, alice, "rematch")
    assert _block(old, alice)["status"] == "accepted"
    assert Match.objects.filter(status=Match.Status.WAITING).count() == 1


def test_nobody_answers_their_own_offer(alice: Any, finished: Any, frame: Frame) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    for op in ("rematch_accept", "rematch_decline"):
        with pytest.raises(ServiceError) as e:
            frame(old, alice, op)
        assert e.value.code == "no_offer"
    assert _block(old, alice)["status"] == "open"


def test_an_offer_lapses_after_two_minutes(
    alice: Any, bob: Any, finished: Any, frame: Frame, clock: Any
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    clock.shift(120)
    assert _block(old, bob)["status"] == "expired"
    with pytest.raises(ServiceError) as e:
        frame(old, bob, "rematch_accept")
    assert e.value.code == "no_offer"
    frame(old, bob, "rematch")  # a new offer, the other way round
    assert _block(old, alice)["offered_by"] == _seat(old, bob)


def test_no_rematch_before_the_match_is_over(alice: Any, bob: Any, frame: Frame) -> None:
    m = accept_invite(create_invite(alice).code, bob)
    with pytest.raises(ServiceError) as e:
        frame(m, alice, "rematch")
    assert e.value.code == "not_over"
    assert _block(m, alice) is None


def test_an_outsider_cannot_offer(outsider: Any, finished: Any, frame: Frame) -> None:
    old = finished(Match.Kind.CASUAL)
    with pytest.raises(ServiceError) as e:
        frame(old, outsider, "rematch")
    assert e.value.code == "not_a_player"


def test_a_same_device_rematch_is_a_new_same_device_match_at_once(
    alice: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.SAME_DEVICE)
    frame(old, alice, "rematch")
    block = _block(old, alice)
    new = Match.objects.get(pk=block["new_match"])
    assert new.kind == Match.Kind.SAME_DEVICE and new.guest_name == "Guest"
    assert new.player0_id == alice.pk and new.player1_id is None
    frame(old, alice, "rematch")  # pressed twice: still one
    assert Match.objects.filter(status=Match.Status.WAITING).count() == 1


def test_an_offer_is_withdrawn_when_the_offerer_is_already_playing_elsewhere(
    alice: Any, bob: Any, carol: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    accept_invite(create_invite(carol).code, alice)
    outcome = frame(old, bob, "rematch_accept")
    assert outcome.error is not None and outcome.error.code == "opponent_busy"
    assert _block(old, bob)["status"] == "withdrawn"
    assert not Match.objects.filter(player0=bob, status=Match.Status.WAITING).exists()


def test_accepting_takes_both_players_out_of_the_ranked_queue(
    alice: Any, bob: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    queue.join(alice)  # nobody else is waiting: she stays queued
    frame(old, bob, "rematch_accept")
    assert not QueueEntry.objects.filter(user__in=[alice, bob]).exists()


def test_a_queued_players_lobby_hears_that_a_rematch_took_it_out_of_the_queue(
    alice: Any, bob: Any, finished: Any, frame: Frame, django_capture_on_commit_callbacks: Any
) -> None:
    # The same path as an invite's (claim_players): the lobby is told, not left waiting.
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    queue.join(alice)
    heard: list[list[int]] = []

    def listen(sender: Any, user_ids: Any, **kwargs: Any) -> None:
        heard.append(sorted(user_ids))

    queue_left.connect(listen)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            frame(old, bob, "rematch_accept")
    finally:
        queue_left.disconnect(listen)
    assert heard == [sorted([alice.pk, bob.pk])]


def test_a_player_with_a_match_waiting_cannot_accept_a_rematch(
    alice: Any, bob: Any, carol: Any, finished: Any, frame: Frame
) -> None:
    old = finished(Match.Kind.CASUAL)
    frame(old, alice, "rematch")
    waiting = accept_invite(create_invite(carol).code, bob)  # bob's new match, not started
    with pytest.raises(ServiceError) as e:
        frame(old, bob, "rematch_accept")
    assert e.value.code == "busy" and e.value.match_id == waiting.pk
    assert _block(old, alice)["status"] == "open"  # nothing changed
    assert Match.objects.filter(status=Match.Status.WAITING).count() == 1


def test_every_step_is_recorded_and_pushed_to_both_seats(
    alice: Any,
    bob: Any,
    finished: Any,
    frame: Frame,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    old = finished(Match.Kind.CASUAL)
    version = Match.objects.get(pk=old.pk).version
    with capture_changes() as pushed, django_capture_on_commit_callbacks(execute=True):
        frame(old, alice, "rematch")
        frame(old, bob, "rematch_decline")
    assert [c.match_id for c in pushed] == [old.pk, old.pk]
    assert [c.version for c in pushed] == [version + 1, version + 2]
    assert Match.objects.get(pk=old.pk).version == version + 2
    kinds = list(MatchEvent.objects.filter(match=old).values_list("kind", flat=True))
    assert kinds[-2:] == ["rematch_offer", "rematch_decline"]


def test_the_rematch_form_posts_and_goes_to_the_new_match(
    alice: Any, bob: Any, finished: Any, client: Any
) -> None:
    old = finished(Match.Kind.CASUAL)
    client.force_login(alice)
    response = client.post(f"/matches/{old.pk}/rematch/", {"op": "rematch"})
    assert response.status_code == 302 and response.url == f"/matches/{old.pk}/"
    client.force_login(bob)
    response = client.post(f"/matches/{old.pk}/rematch/", {"op": "rematch_accept"})
    new_id = _block(old, bob)["new_match"]
    assert response.status_code == 302 and response.url == f"/matches/{new_id}/"


def test_unknown_rematch_ops_are_refused(alice: Any, finished: Any) -> None:
    old = finished(Match.Kind.CASUAL)
    with pytest.raises(ServiceError):
        rematch.act_rematch(old.pk, alice, "rematch_maybe")
