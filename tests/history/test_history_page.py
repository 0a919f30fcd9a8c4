"""/u/<name>/matches/: every match that is over, filterable, paginated, constant queries."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from matches.models import Match


def _rows(html: str) -> list[dict[str, str]]:
    rows = []
    for m in re.finditer(
        r'data-match="(\d+)" data-kind="(\w+)" data-result="(\w+)" data-how="(\w*)"', html
    ):
        rows.append({"id": m[1], "kind": m[2], "result": m[3], "how": m[4]})
    return rows


def _void(m: Match) -> Match:
    """Void a live match the way a service fault does: flagged, then voided."""
    from matches.clock import voiding

    assert voiding.void([m.pk], "worker lost") == [m.pk]
    return Match.objects.get(pk=m.pk)


@pytest.fixture
def every_kind(tables: Any, alice: Any, bob: Any) -> dict[str, Match]:
    """One match of alice's of each kind and ending, plus a live one and a waiting one."""
    return {
        "ranked_won": tables.resign(tables.start(tables.ranked(alice, bob)), bob),
        "casual_lost": tables.resign(tables.start(tables.casual(bob, alice)), alice),
        "same_device": tables.resign(tables.start(tables.same_device(alice, "Grandma")), alice),
        "aborted": tables.resign(tables.ranked(alice, bob), alice),
        "voided": _void(tables.start(tables.ranked(bob, alice))),
        # Waiting first: a player whose clock runs cannot start another match.
        "waiting": tables.casual(alice, bob),
        "live": tables.start(tables.casual(alice, bob)),
    }


def _page(client: Client, name: str = "alice", **params: Any) -> str:
    response = client.get(reverse("history:matches", args=[name]), params)
    assert response.status_code == 200
    return response.content.decode()


def test_it_lists_every_match_that_is_over_of_every_kind(
    client: Client, every_kind: dict[str, Match]
) -> None:
    rows = {r["id"]: r for r in _rows(_page(client))}
    m = every_kind
    assert set(rows) == {
        str(m[k].pk) for k in ("ranked_won", "casual_lost", "same_device", "aborted", "voided")
    }
    assert rows[str(m["ranked_won"].pk)] == {
        "id": str(m["ranked_won"].pk),
        "kind": "ranked",
        "result": "won",
        "how": "resign",
    }
    assert rows[str(m["casual_lost"].pk)]["result"] == "lost"
    assert rows[str(m["casual_lost"].pk)]["kind"] == "casual"
    assert rows[str(m["same_device"].pk)]["kind"] == "same_device"
    assert rows[str(m["aborted"].pk)]["how"] == "abort"
    assert rows[str(m["aborted"].pk)]["result"] == "none"
    assert rows[str(m["voided"].pk)]["how"] == "void"
    assert rows[str(m["voided"].pk)]["result"] == "none"


def test_a_row_shows_the_opponent_and_the_rating_change(
    client: Client, every_kind: dict[str, Match]
) -> None:
    html = _page(client)
    assert 'href="/u/bob/"' in html
    assert "Grandma" in html  # the same-device guest, no link
    assert 'data-rating-change="20"' in html
    assert "+20" in html
    # bob's side of the same match.
    assert 'data-rating-change="-20"' in _page(client, "bob")


def test_it_filters_by_kind(client: Client, every_kind: dict[str, Match]) -> None:
    rows = _rows(_page(client, kind="ranked"))
    assert {r["kind"] for r in rows} == {"ranked"}
    assert len(rows) == 3  # won, aborted, voided
    assert [r["kind"] for r in _rows(_page(client, kind="same_device"))] == ["same_device"]


def test_it_filters_by_result(client: Client, every_kind: dict[str, Match]) -> None:
    m = every_kind
    assert {r["id"] for r in _rows(_page(client, result="none"))} == {
        str(m["aborted"].pk),
        str(m["voided"].pk),
    }
    lost = _rows(_page(client, result="lost"))
    assert str(m["casual_lost"].pk) in {r["id"] for r in lost}
    assert {r["result"] for r in lost} == {"lost"}
    both = _rows(_page(client, kind="ranked", result="won"))
    assert [r["id"] for r in both] == [str(m["ranked_won"].pk)]


def test_an_unknown_filter_value_shows_everything(
    client: Client, every_kind: dict[str, Match]
) -> None:
    assert len(_rows(_page(client, kind="blitz"))) == 5


def test_it_paginates_twenty_to_a_page(client: Client, tables: Any, alice: Any, bob: Any) -> None:
    for _ in range(23):
        # Aborted: the quickest match over (a ranked one: an aborted invite's match
        # reopens its invite, and a player holds at most 20 open invites).
        tables.resign(tables.ranked(alice, bob), bob)
    first = _page(client)
    assert len(_rows(first)) == 20
    assert "page=2" in first
    second = _page(client, page=2)
    assert len(_rows(second)) == 3
    assert not set(r["id"] for r in _rows(first)) & set(r["id"] for r in _rows(second))
    # Filters survive paging.
    assert "kind=casual" in _page(client, kind="casual")


def test_newest_matches_come_first(client: Client, tables: Any, alice: Any, bob: Any) -> None:
    ids = [tables.resign(tables.start(tables.casual(alice, bob)), bob).pk for _ in range(3)]
    assert [int(r["id"]) for r in _rows(_page(client))] == ids[::-1]


def test_an_unknown_player_is_a_404(client: Client, db: Any) -> None:
    assert client.get(reverse("history:matches", args=["nobody"])).status_code == 404


def _history(tables: Any, alice: Any, bob: Any, n: int) -> None:
    """``n`` matches of alice's, of every kind and ending, all over."""
    for i in range(n):
        kind = i % 4
        if kind == 0:
            tables.resign(tables.start(tables.ranked(alice, bob)), bob)
        elif kind == 1:
            tables.resign(tables.start(tables.casual(bob, alice)), alice)
        elif kind == 2:
            tables.resign(tables.start(tables.same_device(alice)), alice)
        else:
            tables.resign(tables.ranked(bob, alice), alice)


# Logged in: session + user (2), the player (1), the paginator's count (1), the
# page of matches with players and rating changes (1), the header bell's unread
# count (1, social.context).
HISTORY_QUERIES = 6


@pytest.mark.parametrize("size", [3, 30])
def test_the_query_count_does_not_grow_with_the_history(
    client: Client,
    tables: Any,
    alice: Any,
    bob: Any,
    size: int,
    django_assert_num_queries: Any,
) -> None:
    _history(tables, alice, bob, size)
    client.force_login(alice)
    with django_assert_num_queries(HISTORY_QUERIES):
        html = _page(client)
    assert len(_rows(html)) == min(size, 20)


def test_the_query_count_is_the_same_for_3_and_30_matches(
    client: Client, tables: Any, alice: Any, bob: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(alice)
    counts = []
    for target in (3, 30):
        _history(
            tables,
            alice,
            bob,
            target
            - Match.objects.filter(player0=alice).count()
            - Match.objects.filter(player1=alice).count(),
        )
        with CaptureQueriesContext(connection) as ctx:
            _page(client)
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] == HISTORY_QUERIES
