"""Follows, the friends-online list, and blocks: refused challenges, the queue, the lobby."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from matches.lobby import matchmaking as queue
from matches.models import Match
from matches.play.act import act
from matches.play.timing import now_ms
from social import presence
from social.models import Block, Challenge, Follow, Notification
from tests.support import Tables


def _online(*users: Any) -> None:
    for u in users:
        presence.touch(u.pk, force=True)


def test_follow_lists_the_player_with_rating_and_online_and_notifies_them(
    api: Any, alice: Any, bob: Any
) -> None:
    c = api(alice)
    r = c.post_json("/api/follows/", {"username": "bob"})
    assert r.status_code == 201
    assert c.post_json("/api/follows/", {"username": "bob"}).status_code == 200  # once
    assert Follow.objects.filter(follower=alice).count() == 1
    assert Notification.objects.filter(user=bob, kind="follow", actor=alice).count() == 1

    listed = c.get("/api/follows/").json()["following"]
    assert listed == [
        {"username": "bob", "online": False, "rating": 1500, "match_id": None, "watch": None}
    ]
    _online(bob)
    assert c.get("/api/follows/").json()["following"][0]["online"] is True


def test_a_followed_player_in_a_live_match_is_listed_with_a_watch_link(
    api: Any, alice: Any, bob: Any, carol: Any
) -> None:
    api(alice).post_json("/api/follows/", {"username": "bob"})
    m = Tables().casual(bob, carol)
    for u in (bob, carol):
        act(m.pk, u, {"op": "start", "version": Match.objects.get(pk=m.pk).version},
                     now_ms())  # fmt: skip
    row = api(alice).get("/api/follows/").json()["following"][0]
    assert row["online"] is True and row["match_id"] == m.pk and row["watch"] == f"/matches/{m.pk}/"
    page = api(alice).get("/")
    assert f'href="/matches/{m.pk}/" data-testid="friend-watch"' in page.content.decode()


def test_unfollow(api: Any, alice: Any, bob: Any) -> None:
    c = api(alice)
    c.post_json("/api/follows/", {"username": "bob"})
    r = c.delete("/api/follows/bob/")
    assert r.status_code == 200 and r.json() == {"username": "bob", "removed": True}
    assert c.get("/api/follows/").json()["following"] == []
    assert c.post_json("/api/follows/", {"username": "alice"}).json()["code"] == "self"


def test_a_blocked_player_cannot_challenge_either_way_and_nothing_is_made(
    api: Any, alice: Any, bob: Any
) -> None:
    assert api(alice).post_json("/api/blocks/", {"username": "bob"}).status_code == 201
    r = api(bob).post_json("/api/challenges/", {"username": "alice"})
    assert r.status_code == 403 and r.json()["code"] == "blocked"
    r = api(alice).post_json("/api/challenges/", {"username": "bob"})
    assert r.status_code == 403 and r.json()["code"] == "blocked"
    assert Challenge.objects.count() == 0
    assert Notification.objects.filter(user=alice).count() == 0
    assert api(alice).get("/api/blocks/").json() == {"blocked": ["bob"]}


def test_blocking_cancels_open_challenges_and_the_follow(api: Any, alice: Any, bob: Any) -> None:
    api(alice).post_json("/api/follows/", {"username": "bob"})
    ch = api(bob).post_json("/api/challenges/", {"username": "alice"}).json()
    api(alice).post_json("/api/blocks/", {"username": "bob"})
    assert Challenge.objects.get(pk=ch["id"]).status == "cancelled"
    assert not Follow.objects.filter(follower=alice).exists()
    r = api(alice).post_json(f"/api/challenges/{ch['id']}/accept/")
    assert r.status_code == 409 and Match.objects.count() == 0


def test_unblocking_lets_a_challenge_through_again(api: Any, alice: Any, bob: Any) -> None:
    api(alice).post_json("/api/blocks/", {"username": "bob"})
    assert api(alice).delete("/api/blocks/bob/").json()["removed"] is True
    assert api(bob).post_json("/api/challenges/", {"username": "alice"}).status_code == 201


def test_the_ranked_queue_never_pairs_blocked_players(alice: Any, bob: Any, carol: Any) -> None:
    Block.objects.create(blocker=alice, blocked=bob)
    queue.join(alice, pair=False)
    queue.join(bob, pair=False)
    assert queue.pair_waiting() == []  # the only two waiting: kept apart, both still queued
    assert queue.status_of(alice)["in_queue"] and queue.status_of(bob)["in_queue"]
    made = queue.join(carol).match
    assert made is not None
    assert {made.player0_id, made.player1_id} in ({alice.pk, carol.pk}, {bob.pk, carol.pk})


def test_a_blocked_players_match_is_left_out_of_the_blockers_lobby(
    api: Any, alice: Any, bob: Any, carol: Any, dave: Any
) -> None:
    m = Tables().casual(bob, carol)
    for u in (bob, carol):
        act(m.pk, u, {"op": "start", "version": Match.objects.get(pk=m.pk).version},
                     now_ms())  # fmt: skip
    assert f'data-match="{m.pk}"' in api(alice).get("/").content.decode()
    api(alice).post_json("/api/blocks/", {"username": "bob"})
    html = api(alice).get("/").content.decode()
    assert f'data-match="{m.pk}"' not in html and "bob" not in html
    assert f'data-match="{m.pk}"' in api(dave).get("/").content.decode()  # others still see it


def test_presence_goes_stale(alice: Any) -> None:
    import time_machine

    _online(alice)
    assert presence.online_ids([alice.pk]) == {alice.pk}
    with time_machine.travel(timezone.now() + presence.ONLINE_FOR + presence.WRITE_EVERY):
        assert presence.online_ids([alice.pk]) == set()


def test_the_friends_card_refreshes_itself_with_who_is_online(
    api: Any, alice: Any, bob: Any
) -> None:
    c = api(alice)
    c.post_json("/api/follows/", {"username": "bob"})
    assert 'data-testid="friends-none"' in c.get("/friends/").content.decode()
    _online(bob)
    html = c.get("/friends/").content.decode()
    assert 'data-username="bob"' in html and "csrfmiddlewaretoken" in html


def test_following_again_rings_the_bell_once_a_day(api: Any, alice: Any, bob: Any) -> None:
    c = api(alice)
    for _ in range(3):
        c.post_json("/api/follows/", {"username": "bob"})
        c.delete("/api/follows/bob/")
    assert Notification.objects.filter(user=bob, kind="follow").count() == 1
