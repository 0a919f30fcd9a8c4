"""The profile's rating card and recent matches, and /leaderboard/."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client
from django.urls import reverse

from history.profile import extras


def _profile(client: Client, name: str) -> str:
    response = client.get(reverse("profile", args=[name]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_new_player_shows_a_provisional_1500_and_no_chart(client: Client, alice: Any) -> None:
    html = _profile(client, "alice")
    assert 'data-rating="1500"' in html
    assert "1500?" in html
    assert 'class="chart"' not in html
    assert "profile-recent" in html


def test_the_profile_shows_the_rating_its_chart_and_recent_matches(
    client: Client, tables: Any, alice: Any, bob: Any
) -> None:
    m1 = tables.resign(tables.start(tables.ranked(alice, bob)), bob)  # 1520
    m2 = tables.resign(tables.start(tables.ranked(bob, alice)), bob)  # ~1538
    tables.resign(tables.start(tables.casual(alice, bob)), alice)
    html = _profile(client, "alice")
    assert "1538?" in html
    assert 'data-stat="ranked-played">2<' in html
    assert 'data-stat="ranked-won">2<' in html
    # The rating chart: one line, from 1500 through 1520 to 1538.
    chart = extras(alice)["rating_chart"]
    assert chart is not None and len(chart.series) == 1
    assert len(chart.series[0].points.split()) == 3
    assert html.count("<polyline") == 1
    rows = re.findall(r'data-match="(\d+)"', html)
    assert len(rows) == 3 and str(m2.pk) in rows and str(m1.pk) in rows
    assert reverse("history:matches", args=["alice"]) in html


def test_the_profile_links_replays_only_for_those_who_may_watch(
    client: Client, tables: Any, alice: Any, bob: Any, outsider: Any
) -> None:
    m = tables.resign(tables.start(tables.ranked(alice, bob)), bob)
    replay = reverse("history:replay", args=[m.pk])
    client.force_login(outsider)
    assert replay not in _profile(client, "alice")
    client.force_login(bob)
    assert replay in _profile(client, "alice")


def test_the_profile_costs_a_fixed_number_of_queries(
    client: Client, tables: Any, alice: Any, bob: Any, django_assert_num_queries: Any
) -> None:
    for _ in range(8):
        tables.resign(tables.start(tables.ranked(alice, bob)), bob)
    # player, record, rating, rating chart, ranked record, recent matches, arenas played.
    with django_assert_num_queries(7):
        _profile(client, "alice")


def _rated(tables: Any, a: Any, b: Any, n: int) -> None:
    for _ in range(n):
        tables.resign(tables.start(tables.ranked(a, b)), b)


def _leaderboard(client: Client) -> list[str]:
    response = client.get(reverse("history:leaderboard"))
    assert response.status_code == 200
    return re.findall(r'data-player="([^"]+)"', response.content.decode())


def test_the_leaderboard_needs_five_rated_matches(
    client: Client, tables: Any, alice: Any, bob: Any, carol: Any, dave: Any
) -> None:
    _rated(tables, alice, bob, 5)  # alice and bob: 5 each
    _rated(tables, carol, dave, 4)  # carol and dave: 4 each
    tables.resign(tables.start(tables.casual(carol, dave)), dave)  # casual: not rated
    assert _leaderboard(client) == ["alice", "bob"]
    _rated(tables, dave, carol, 1)  # the fifth for both
    assert set(_leaderboard(client)) == {"alice", "bob", "carol", "dave"}


def test_the_leaderboard_is_ordered_by_rating_and_marks_provisional_ones(
    client: Client, tables: Any, alice: Any, bob: Any, carol: Any, dave: Any
) -> None:
    _rated(tables, alice, bob, 5)
    _rated(tables, dave, carol, 3)
    _rated(tables, carol, dave, 2)
    names = _leaderboard(client)
    assert names[0] == "alice" and names[-1] == "bob"
    assert names == ["alice", "dave", "carol", "bob"]
    html = client.get(reverse("history:leaderboard")).content.decode()
    assert re.search(r"rating--provisional[^>]*>\d+\?<", html)


def test_the_leaderboard_is_empty_at_first(client: Client, db: Any) -> None:
    assert _leaderboard(client) == []
