"""Challenges by name through the API: the happy path and every refusal, each changing nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from matches.models import Match, QueueEntry
from matches.play.act import act
from matches.play.timing import now_ms
from social.models import Challenge, Notification
from tests.support import Tables, make_user


def _live(a: Any, b: Any) -> Match:
    """A casual match between ``a`` and ``b``, both pressed start: under way."""
    m = Tables().casual(a, b)
    for u in (a, b):
        act(m.pk, u, {"op": "start", "version": Match.objects.get(pk=m.pk).version},
                     now_ms())  # fmt: skip
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    return m


def _challenge(api: Any, a: Any, b: Any) -> Any:
    return api(a).post_json("/api/challenges/", {"username": b.username})


def test_a_challenge_is_listed_for_both_and_accepting_makes_a_casual_match(
    api: Any, alice: Any, bob: Any
) -> None:
    r = _challenge(api, alice, bob)
    assert r.status_code == 201, r.content
    ch = r.json()
    assert ch["from"] == "alice" and ch["to"] == "bob" and ch["status"] == "open"
    assert ch["kind"] == "casual"

    listed_b = api(bob).get("/api/challenges/").json()
    assert [c["id"] for c in listed_b["incoming"]] == [ch["id"]] and listed_b["outgoing"] == []
    listed_a = api(alice).get("/api/challenges/").json()
    assert [c["id"] for c in listed_a["outgoing"]] == [ch["id"]] and listed_a["incoming"] == []
    assert Notification.objects.filter(user=bob, kind="challenge").count() == 1

    r = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/")
    assert r.status_code == 200, r.content
    body = r.json()
    m = Match.objects.get(pk=body["match_id"])
    assert body["ws"] == f"/ws/matches/{m.pk}/"
    assert m.kind == Match.Kind.CASUAL and m.status == Match.Status.WAITING
    assert {m.player0_id, m.player1_id} == {alice.pk, bob.pk}
    assert Notification.objects.filter(
        user=alice, kind="challenge_accepted", match_id=m.pk
    ).exists()
    # Accepted: gone from both open lists.
    assert api(bob).get("/api/challenges/").json()["incoming"] == []


def test_decline_and_cancel_close_the_challenge(api: Any, alice: Any, bob: Any) -> None:
    first = _challenge(api, alice, bob).json()
    r = api(bob).post_json(f"/api/challenges/{first['id']}/decline/")
    assert r.status_code == 200 and r.json()["status"] == "declined"
    assert Notification.objects.filter(user=alice, kind="challenge_declined").exists()
    # A declined challenge cannot be accepted afterwards.
    r = api(bob).post_json(f"/api/challenges/{first['id']}/accept/")
    assert r.status_code == 409 and r.json()["code"] == "challenge_closed"

    second = _challenge(api, alice, bob).json()
    # Only the challenger cancels, only the challenged accepts or declines.
    assert api(bob).post_json(f"/api/challenges/{second['id']}/cancel/").status_code == 404
    assert api(alice).post_json(f"/api/challenges/{second['id']}/accept/").status_code == 404
    r = api(alice).post_json(f"/api/challenges/{second['id']}/cancel/")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert Match.objects.count() == 0


def test_challenging_yourself_is_refused(api: Any, alice: Any) -> None:
    r = _challenge(api, alice, alice)
    assert r.status_code == 400 and r.json()["code"] == "self"
    assert Challenge.objects.count() == 0


def test_challenging_nobody_or_garbage_is_refused(api: Any, alice: Any) -> None:
    c = api(alice)
    assert c.post_json("/api/challenges/", {"username": "nobody"}).status_code == 404
    r = c.post_json("/api/challenges/", {"username": 7})
    assert r.status_code == 400 and r.json()["code"] == "bad_request"
    r = c.post("/api/challenges/", "not json", content_type="application/json")
    assert r.status_code == 400
    assert Challenge.objects.count() == 0


def test_challenging_the_computer_is_refused(api: Any, alice: Any) -> None:
    from accounts.models import User

    robot = User.objects.filter(computer_level=2).first() or make_user(
        "robot", is_bot=True, computer_level=2
    )
    r = _challenge(api, alice, robot)
    assert r.status_code == 400 and r.json()["code"] == "computer"
    assert Challenge.objects.count() == 0


def test_challenging_a_busy_player_is_refused(api: Any, alice: Any, bob: Any, carol: Any) -> None:
    _live(bob, carol)
    r = _challenge(api, alice, bob)
    assert r.status_code == 409 and r.json()["code"] == "opponent_busy"
    assert Challenge.objects.count() == 0


def test_a_busy_player_cannot_accept_and_nothing_changes(
    api: Any, alice: Any, bob: Any, carol: Any
) -> None:
    ch = _challenge(api, alice, bob).json()
    m = _live(bob, carol)
    r = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/")
    assert r.status_code == 409 and r.json()["code"] == "busy"
    assert r.json()["match_id"] == m.pk
    assert Challenge.objects.get(pk=ch["id"]).status == "open"
    assert Match.objects.count() == 1


def test_an_expired_challenge_cannot_be_accepted(api: Any, alice: Any, bob: Any) -> None:
    ch = _challenge(api, alice, bob).json()
    with time_machine.travel(timezone.now() + timedelta(minutes=3, seconds=1)):
        assert api(bob).get("/api/challenges/").json()["incoming"] == []
        r = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/")
        assert r.status_code == 409 and r.json()["code"] == "challenge_expired"
    assert Match.objects.count() == 0
    assert Challenge.objects.get(pk=ch["id"]).status == "open"


def test_one_open_challenge_per_opponent_and_five_in_all(api: Any, alice: Any, bob: Any) -> None:
    assert _challenge(api, alice, bob).status_code == 201
    r = _challenge(api, alice, bob)
    assert r.status_code == 409 and r.json()["code"] == "already_challenged"
    others = [make_user(f"p{i}") for i in range(5)]
    codes = [_challenge(api, alice, o).status_code for o in others]
    assert codes == [201, 201, 201, 201, 429]
    assert Challenge.objects.filter(challenger=alice).count() == 5


def test_accepting_takes_both_out_of_the_ranked_queue(api: Any, alice: Any, bob: Any) -> None:
    from matches.lobby import matchmaking as queue

    ch = _challenge(api, alice, bob).json()
    queue.join(alice, pair=False)
    assert QueueEntry.objects.filter(user=alice).exists()
    api(bob).post_json(f"/api/challenges/{ch['id']}/accept/")
    assert not QueueEntry.objects.filter(user=alice).exists()


def test_anonymous_calls_get_401(client: Any, db: Any) -> None:
    assert client.get("/api/challenges/").status_code == 401
    assert client.post("/api/challenges/", {}).status_code == 401


def test_asking_and_cancelling_again_and_again_is_capped_per_hour(
    api: Any, alice: Any, bob: Any
) -> None:
    from social.challenges import MAX_PER_HOUR

    c = api(alice)
    for _ in range(MAX_PER_HOUR):
        ch = _challenge(api, alice, bob).json()
        c.post_json(f"/api/challenges/{ch['id']}/cancel/")
    r = _challenge(api, alice, bob)
    assert r.status_code == 429 and r.json()["code"] == "too_many_challenges"
    assert Notification.objects.filter(user=bob, kind="challenge").count() == MAX_PER_HOUR
