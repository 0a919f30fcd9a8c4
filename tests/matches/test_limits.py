"""Abuse limits: open invites, matches waiting to start, and one live match at a time.

A player may hold at most 20 open invites and 3 matches that have not ended;
a player whose match is under way cannot start another — the lobby and every
way into a new match take them back to it. Each refusal says why, in Japanese
by default, and changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from matches.lobby.invites import (
    MAX_OPEN_INVITES,
    accept_invite,
    cancel_invite,
    create_invite,
    create_same_device,
)
from matches.models import Invite, Match
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError

pytestmark = pytest.mark.django_db


def _start(m: Match, *users: Any) -> Match:
    for u in users:
        act(m.pk, u, {"op": "start", "version": 0}, timing.now_ms())
    m.refresh_from_db()
    return m


def test_the_21st_open_invite_is_refused(alice: Any) -> None:
    for _ in range(MAX_OPEN_INVITES):
        create_invite(alice)
    with pytest.raises(ServiceError) as e:
        create_invite(alice)
    assert e.value.code == "too_many_invites"
    assert Invite.objects.filter(creator=alice).count() == 20
    # Cancelling one makes room again.
    cancel_invite(Invite.objects.filter(creator=alice).first().code, alice)
    create_invite(alice)


def test_the_api_answers_429_with_a_japanese_message(alice: Any, client: Client) -> None:
    for _ in range(MAX_OPEN_INVITES):
        create_invite(alice)
    client.force_login(alice)
    r = client.post("/api/invites/")
    assert r.status_code == 429
    assert r.json()["code"] == "too_many_invites"
    assert "受付中の招待が20件" in r.json()["message"]


def test_a_fourth_waiting_match_is_refused(alice: Any, bob: Any, carol: Any, dave: Any) -> None:
    for other in (bob, carol, dave):
        accept_invite(create_invite(other).code, alice)
    outsider_invite = create_invite(bob)
    with pytest.raises(ServiceError) as e:
        create_same_device(alice, "Hanako")
    assert e.value.code == "too_many_matches"
    with pytest.raises(ServiceError) as e:
        accept_invite(outsider_invite.code, alice)
    assert e.value.code == "too_many_matches"
    assert (
        Match.objects.filter(player0=alice).count() + Match.objects.filter(player1=alice).count()
        == 3
    )
    outsider_invite.refresh_from_db()
    assert outsider_invite.status == Invite.Status.OPEN  # the refused accept changed nothing


def test_a_player_whose_match_is_under_way_cannot_start_another(
    alice: Any, bob: Any, carol: Any
) -> None:
    live = _start(accept_invite(create_invite(alice).code, bob), alice, bob)
    assert live.status == Match.Status.LIVE
    invite = create_invite(carol)
    for attempt in (
        lambda: accept_invite(invite.code, alice),
        lambda: create_same_device(alice, "Hanako"),
    ):
        with pytest.raises(ServiceError) as e:
            attempt()
        assert e.value.code == "busy" and e.value.match_id == live.pk
    # Accepting the invite of someone who is playing is refused too.
    with pytest.raises(ServiceError) as e:
        accept_invite(create_invite(bob).code, carol)
    assert e.value.code == "opponent_busy"


def test_the_lobby_and_the_accept_button_take_a_playing_player_back_to_the_match(
    alice: Any, bob: Any, carol: Any, client: Client
) -> None:
    live = _start(accept_invite(create_invite(alice).code, bob), alice, bob)
    client.force_login(alice)
    r = client.get("/")
    assert r.status_code == 302 and r["Location"] == f"/matches/{live.pk}/"
    invite = create_invite(carol)
    r = client.post(f"/invites/{invite.code}/accept/", follow=True)
    assert r.redirect_chain[-1][0] == f"/matches/{live.pk}/"
    assert "まず今の対局を終えてください" in r.content.decode()
    # Once the match is over the lobby is the lobby again.
    act(live.pk, alice, {"op": "resign", "version": live.version}, timing.now_ms())
    assert client.get("/").status_code == 200
