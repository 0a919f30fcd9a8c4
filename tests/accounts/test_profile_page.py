"""The profile page /u/<username>/ and the record it shows (accounts/stats.py)."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.stats import Record, record_for
from matches.lobby.invites import accept_invite, create_invite, create_same_device
from matches.models import Match
from matches.play import timing
from matches.play.act import act
from tests.support import live_casual

live_match = live_casual  # a casual match between two accounts, both Starts pressed


def resign(match: Match, user: Any) -> None:
    match.refresh_from_db()
    act(match.pk, user, {"op": "resign", "version": match.version}, timing.now_ms())
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED


def test_it_is_404_for_an_unknown_user(client: Client, db: Any) -> None:
    assert client.get("/u/nobody/").status_code == 404


def test_it_is_404_for_a_deactivated_user(client: Client, alice: Any) -> None:
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert client.get("/u/alice/").status_code == 404


def test_anyone_can_see_a_profile(client: Client, alice: Any) -> None:
    response = client.get("/u/alice/")
    assert response.status_code == 200
    assert "alice" in response.content.decode()


def test_it_counts_a_won_and_a_lost_match(client: Client, alice: Any, bob: Any) -> None:
    resign(live_match(alice, bob), bob)  # alice wins at seat 0
    resign(live_match(bob, alice), bob)  # alice wins at seat 1
    resign(live_match(alice, bob), alice)  # alice loses

    assert record_for(alice) == Record(played=3, won=2, lost=1)
    assert record_for(bob) == Record(played=3, won=1, lost=2)

    page = client.get("/u/alice/").content.decode()
    assert 'data-stat="played">3<' in page
    assert 'data-stat="won">2<' in page
    assert 'data-stat="lost">1<' in page


def test_unfinished_and_aborted_matches_do_not_count(alice: Any, bob: Any, charlie: Any) -> None:
    waiting = accept_invite(create_invite(alice).code, charlie)
    act(waiting.pk, charlie, {"op": "resign", "version": waiting.version}, 0)
    waiting.refresh_from_db()
    assert waiting.status == Match.Status.ABORTED
    live_match(alice, bob)

    assert record_for(alice) == Record()


def test_same_device_practice_does_not_count(alice: Any) -> None:
    match = create_same_device(alice, "guest")
    act(match.pk, alice, {"op": "start", "version": match.version}, timing.now_ms())
    resign(match, alice)
    assert record_for(alice) == Record()


def test_the_record_takes_one_query(alice: Any, bob: Any) -> None:
    resign(live_match(alice, bob), bob)
    with CaptureQueriesContext(connection) as queries:
        record_for(alice)
    assert len(queries) == 1
