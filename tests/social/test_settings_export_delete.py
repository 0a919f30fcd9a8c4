"""The settings page, the data export (what the player could see, nothing more), and
account deletion (an anonymous name in the opponent's history, ratings unchanged)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from matches.models import Match, MatchEvent
from ratings.models import PlayerRating, RatingChange
from social.models import Follow, Preferences
from tests.support import PASSWORD, Tables, make_user, use_embedded_default


@pytest.fixture
def tables(settings: Any) -> Tables:
    use_embedded_default(settings, deal_seed=5)
    return Tables()


@pytest.fixture
def played(tables: Tables, alice: Any, bob: Any) -> Match:
    """40 real decisions over more than one hand, then bob resigns."""
    m = tables.play(tables.start(tables.casual(alice, bob)), 40)
    assert not m.is_over
    return tables.resign(m, bob)


def test_the_settings_page_saves_sound_vibration_and_push(api: Any, alice: Any) -> None:
    c = api(alice)
    page = c.get("/settings/").content.decode()
    for part in ("settings-language", "settings-alerts", "settings-email", "settings-data",
                 "settings-delete"):  # fmt: skip
        assert f'data-testid="{part}"' in page
    assert c.post("/settings/", {"vibration": "on"}).status_code == 302
    p = Preferences.objects.get(user=alice)
    assert (p.sound, p.vibration, p.push) == (False, True, False)
    # Handed to static/js/settings.js, which keeps them for the match page's turn alert.
    page = c.get("/settings/").content.decode()
    assert 'data-turn-sound="0" data-turn-vibration="1"' in page


def test_settings_need_a_login(client: Any, db: Any) -> None:
    r = client.get("/settings/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def _tiles_in(obj: Any) -> set[tuple[int, int]]:
    """Every tile written anywhere in ``obj``: ``[a, b]`` lists and ``[a|b]`` in text."""
    found: set[tuple[int, int]] = set()
    if isinstance(obj, list) and len(obj) == 2 and all(type(x) is int for x in obj):
        found.add((min(obj), max(obj)))
    elif isinstance(obj, list):
        for x in obj:
            found |= _tiles_in(x)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k not in ("balances", "main_ms", "seats"):  # numbers, not tiles
                found |= _tiles_in(v)
    elif isinstance(obj, str):
        found |= {(min(int(a), int(b)), max(int(a), int(b)))
                  for a, b in re.findall(r"\[(\d)\|(\d)\]", obj)}  # fmt: skip
    return found


def test_the_export_holds_every_match_with_only_what_the_player_saw(
    api: Any, alice: Any, bob: Any, played: Match
) -> None:
    r = api(alice).get("/settings/export/")
    assert r.status_code == 200 and r["Content-Type"] == "application/json"
    assert "attachment" in r["Content-Disposition"]
    data = json.loads(r.content)
    assert data["profile"]["username"] == "alice"
    (m,) = data["matches"]
    assert m["id"] == played.pk and m["names"] == ["alice", "bob"] or m["names"] == ["bob", "alice"]
    seat = played.seats_of(alice.pk)[0]
    assert m["seats"] == [seat]
    assert len(m["steps"]) > 10
    deals = {e.data["hand"]: e.data for e in MatchEvent.objects.filter(match=played, kind="deal")}
    assert len(deals) >= 2
    for step in m["steps"]:
        assert set(step) >= {"text", "my_hands", "table", "balances"}
        assert "talon" not in step and "hands" not in step
        assert list(step["my_hands"]) == [str(seat)]
        seen = (
            set(map(tuple, step["my_hands"][str(seat)]))
            | {(min(p["tile"]), max(p["tile"])) for p in step["table"]}
            | _tiles_in(step.get("draws", []))
        )
        assert _tiles_in(step) <= {(min(t), max(t)) for t in seen}, step
    first_deal = next(s for s in m["steps"] if s["kind"] == "hand_start" and s["hand"] == 0)
    theirs = {tuple(sorted(t)) for t in deals[0]["hands"][1 - seat]}
    assert not (_tiles_in(first_deal) & theirs)
    assert len(first_deal["my_hands"][str(seat)]) == len(deals[0]["hands"][seat])


def test_the_export_shows_no_draws_of_the_opponent_when_the_player_resigned_during_them(
    api: Any, tables: Tables, alice: Any, bob: Any
) -> None:
    # The opponent drew (the server draws for a player who cannot place) and the player
    # resigned before the opponent decided: those tiles are still the opponent's.
    m, drawer = tables.until_drawn(tables.start(tables.casual(alice, bob)))
    resigner = tables.user_at(m, 1 - drawer)
    tables.resign(m, resigner)
    theirs = {
        (min(e.data["tile"]), max(e.data["tile"]))
        for e in MatchEvent.objects.filter(match=m, kind="draw")
        if e.data["player"] == drawer
    }
    (exported,) = json.loads(api(resigner).get("/settings/export/").content)["matches"]
    last = exported["steps"][-1]
    assert (last["kind"], last["player"]) == ("resign", 1 - drawer)
    for step in exported["steps"]:
        if step["player"] == drawer:
            assert "draws" not in step
        assert not (_tiles_in(step.get("draws", [])) & theirs), step


def test_export_of_a_match_not_over_has_no_steps(
    api: Any, tables: Tables, alice: Any, bob: Any
) -> None:
    tables.start(tables.casual(alice, bob))
    (m,) = json.loads(api(alice).get("/settings/export/").content)["matches"]
    assert m["status"] == "live" and "steps" not in m


def test_deleting_the_account_makes_the_name_anonymous_and_keeps_ratings(
    tables: Tables, db: Any, settings: Any
) -> None:
    settings.RATED_MIN_DECISIONS = 0  # a rated match made quickly (fair play: tests/trust/)
    alice = make_user("alice", PASSWORD)
    bob = make_user("bob", PASSWORD)
    m = tables.resign(tables.start(tables.ranked(alice, bob)), alice)
    bob_rating = PlayerRating.objects.get(user=bob).rating
    changes = RatingChange.objects.count()
    Follow.objects.create(follower=alice, followed=bob)
    c = Client()
    c.force_login(alice)
    # A wrong password deletes nothing.
    c.post("/settings/delete/", {"password": "wrong", "confirm": "yes"})
    assert User.objects.get(pk=alice.pk).username == "alice"
    r = c.post("/settings/delete/", {"password": PASSWORD, "confirm": "yes"})
    assert r.status_code == 302
    gone = User.objects.get(pk=alice.pk)
    assert gone.username.startswith("deleted-") and not gone.is_active
    assert not gone.has_usable_password() and gone.email == ""
    assert not Follow.objects.filter(follower=gone).exists()
    assert Match.objects.get(pk=m.pk).names()[m.seats_of(alice.pk)[0]] == gone.username
    assert PlayerRating.objects.get(user=bob).rating == bob_rating
    assert RatingChange.objects.count() == changes
    # bob's history names the anonymous account, never alice.
    b = Client()
    b.force_login(bob)
    html = b.get("/u/bob/matches/").content.decode()
    assert gone.username in html and "alice" not in html
    assert Client().get("/u/alice/").status_code == 404
    login = Client()
    r = login.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert r.status_code == 200 and "_auth_user_id" not in login.session


def test_an_account_with_a_live_match_is_not_deleted(tables: Tables, db: Any) -> None:
    alice = make_user("alice", PASSWORD)
    bob = make_user("bob", PASSWORD)
    tables.start(tables.casual(alice, bob))
    c = Client()
    c.force_login(alice)
    c.post("/settings/delete/", {"password": PASSWORD, "confirm": "yes"})
    assert User.objects.get(pk=alice.pk).username == "alice"
    assert User.objects.get(pk=alice.pk).is_active
