"""The arena API as bots use it (docs/protocol.md, "Arenas"): tokens, no CSRF, JSON."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from accounts import bot_accounts
from matches.models import Match
from tests.support import FAST_HASHERS, PASSWORD, Tables, make_user
from tournaments import scoring, services
from tournaments.models import Arena, Entry, Pairing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fast(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    caches["ratelimit"].clear()


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def client() -> Client:
    return Client(enforce_csrf_checks=True)


def staff_client() -> Client:
    c = Client()
    c.force_login(make_user("staffer", is_staff=True))
    return c


def create(c: Client, **body: Any) -> Any:
    return c.post("/api/tournaments/", json.dumps(body), content_type="application/json")


def test_staff_create_an_arena_by_post_and_others_may_not() -> None:
    r = create(staff_client(), name="金曜アリーナ", minutes=90, starts_in_s=600, rated=True)
    assert r.status_code == 201
    a = Arena.objects.get(pk=r.json()["id"])
    assert (a.name, a.minutes, a.rated, a.phase()) == ("金曜アリーナ", 90, True, "upcoming")
    person = Client()
    person.force_login(make_user("someone"))
    r = create(person, name="x", minutes=60, starts_in_s=0, rated=False)
    assert r.status_code == 403 and r.json()["code"] == "forbidden"
    assert Arena.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "minutes": 59, "starts_in_s": 0, "rated": True},
        {"name": "x", "minutes": 121, "starts_in_s": 0, "rated": True},
        {"name": "x", "minutes": "60", "starts_in_s": 0, "rated": True},
        {"name": "", "minutes": 60, "starts_in_s": 0, "rated": True},
        {"minutes": 60, "starts_in_s": 0, "rated": True},
        {"name": "x", "minutes": 60, "starts_in_s": -5, "rated": True},
        {"name": "x", "minutes": 60, "starts_in_s": 0, "rated": "yes"},
        {"name": "a\u0000b", "minutes": 60, "starts_in_s": 0, "rated": True},
    ],
)
def test_a_bad_arena_is_refused_with_a_reason_and_nothing_is_made(body: dict[str, Any]) -> None:
    r = create(staff_client(), **body)
    assert r.status_code == 400
    assert r.json()["code"] in ("bad_request", "bad_name", "bad_minutes") and r.json()["message"]
    assert not Arena.objects.exists()


def test_unknown_arena_and_anonymous_calls_are_refused() -> None:
    c = Client()
    assert c.get("/api/tournaments/").status_code == 401
    c.force_login(make_user("someone"))
    assert c.get("/api/tournaments/999/").status_code == 404
    assert c.post("/api/tournaments/999/join/").status_code == 404
    assert c.post("/api/tournaments/1/leave/").status_code == 404  # no such action


def test_eight_bots_join_play_through_pairings_and_the_standings_add_up() -> None:
    r = create(staff_client(), name="Bot night", minutes=60, starts_in_s=0, rated=False)
    arena_id = r.json()["id"]
    bots = []
    for i in range(8):
        user = bot_accounts.become_bot(make_user(f"bot{i}", PASSWORD))
        bots.append((user, bot_accounts.issue_token(user)))
    for _user, token in bots:
        r = client().post(f"/api/tournaments/{arena_id}/join/", **bearer(token))
        assert r.status_code == 200, r.content
        assert r.json()["you"]["waiting"] is True
    listed = client().get("/api/tournaments/", **bearer(bots[0][1])).json()
    assert [a["id"] for a in listed["running"]] == [arena_id]

    tables = Tables()
    history: dict[str, list[str]] = defaultdict(list)  # each bot's results, in order
    for _round in range(4):
        services.pairing_pass()  # what the periodic job runs every 2 s
        for _user, token in bots:
            detail = client().get(f"/api/tournaments/{arena_id}/", **bearer(token)).json()
            you = detail["you"]
            if you["match_id"] is None:
                continue
            live = client().get("/api/matches/live/", **bearer(token)).json()["matches"]
            assert you["match_id"] in [m["id"] for m in live]  # like any match
            m = Match.objects.get(pk=you["match_id"])
            if m.status != Match.Status.WAITING:
                continue  # its opponent already played it out
            # The lower name wins (seat order is random): resign for the other.
            m = tables.start(m)
            names = m.names()
            winner_seat = 0 if names[0] < names[1] else 1
            loser = m.player1 if winner_seat == 0 else m.player0
            tables.resign(m, loser)
            history[names[winner_seat]].append(scoring.WIN)
            history[names[1 - winner_seat]].append(scoring.LOSS)

    detail = client().get(f"/api/tournaments/{arena_id}/", **bearer(bots[0][1])).json()
    rows = detail["standings"]
    assert [r["rank"] for r in rows] == list(range(1, 9))
    assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
    counted = Pairing.objects.filter(arena_id=arena_id, counted=True)
    assert counted.count() == 16  # four rounds of four matches
    for row in rows:
        # Each bot's points and streak are its own results replayed by the rules.
        points = streak = 0
        for result in history[row["username"]]:
            s = scoring.score(result, streak)
            points, streak = points + s.points, s.streak
        assert (row["points"], row["streak"], row["played"]) == (
            points,
            streak,
            len(history[row["username"]]),
        )
    # And the table adds up to what the matches gave.
    assert sum(r["points"] for r in rows) == sum(sum(p.points) for p in counted)
    assert sum(r["played"] for r in rows) == 2 * counted.count()


def test_a_bot_may_not_join_a_rated_arena() -> None:
    r = create(staff_client(), name="Rated", minutes=60, starts_in_s=0, rated=True)
    user = bot_accounts.become_bot(make_user("robo", PASSWORD))
    token = bot_accounts.issue_token(user)
    r = client().post(f"/api/tournaments/{r.json()['id']}/join/", **bearer(token))
    assert r.status_code == 403 and r.json()["code"] == "bot_not_rated"
    assert not Entry.objects.exists()


def test_pause_and_withdraw_by_api(transactional_db: Any) -> None:
    arena_id = create(staff_client(), name="A", minutes=60, starts_in_s=0, rated=True).json()["id"]
    c = Client()
    c.force_login(make_user("human"))
    assert c.post(f"/api/tournaments/{arena_id}/pause/").json()["code"] == "not_joined"
    c.post(f"/api/tournaments/{arena_id}/join/")
    assert c.post(f"/api/tournaments/{arena_id}/pause/").json()["you"]["state"] == "paused"
    assert c.post(f"/api/tournaments/{arena_id}/withdraw/").json()["you"]["state"] == "withdrawn"
    assert c.get(f"/api/tournaments/{arena_id}/").json()["standings"][0]["state"] == "withdrawn"
