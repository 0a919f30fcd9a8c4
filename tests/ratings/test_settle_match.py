"""Ratings change when a ranked match finishes, in the transaction that finishes it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from matches.clock.deadlines import check_match
from matches.models import Match
from matches.play import timing
from ratings.models import PlayerRating, RatingChange
from ratings.services import rating_of, settle_match


def _rating(user: Any) -> int:
    return rating_of(user).value


def test_a_ranked_match_ending_by_resign_changes_both_ratings(
    tables: Any, alice: Any, bob: Any
) -> None:
    m = tables.start(tables.ranked(alice, bob))
    tables.act(m, bob, "resign")
    # No reload, no commit hook: the rows exist as soon as act returns.
    changes = {c.player_id: c for c in RatingChange.objects.filter(match=m)}
    assert changes[alice.pk].before == 1500 and changes[alice.pk].after == 1520
    assert changes[bob.pk].before == 1500 and changes[bob.pk].after == 1480
    assert changes[alice.pk].change == 20 and changes[bob.pk].change == -20
    assert changes[alice.pk].k == 40
    assert _rating(alice) == 1520 and _rating(bob) == 1480
    assert PlayerRating.objects.get(user=alice).rated_matches == 1
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.end_reason == "resign"


def test_the_change_is_part_of_the_transaction_that_finishes_the_match(
    tables: Any, alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = tables.start(tables.ranked(alice, bob))

    def broken(match: Any) -> None:
        raise RuntimeError("rating store down")

    monkeypatch.setattr("ratings.services.settle_match", broken)
    with pytest.raises(RuntimeError):
        tables.act(m, bob, "resign")
    # The failure rolled the finish back too: the match is still live, unrated.
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    assert not RatingChange.objects.exists()


def test_a_ranked_match_lost_on_time_is_rated(tables: Any, alice: Any, bob: Any) -> None:
    m = tables.start(tables.ranked(alice, bob))
    live = Match.objects.get(pk=m.pk)
    assert check_match(live.pk, live.version, now=timing.now_ms() + 10**9)
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.end_reason == "time"
    loser = m.player0 if m.winner_seat == 1 else m.player1
    winner = m.player1 if m.winner_seat == 1 else m.player0
    assert _rating(winner) == 1520 and _rating(loser) == 1480


def test_settling_twice_changes_nothing(tables: Any, alice: Any, bob: Any) -> None:
    m = tables.ranked_result(alice, bob)
    first = {c.pk for c in RatingChange.objects.filter(match=m)}
    with transaction.atomic():
        again = settle_match(Match.objects.get(pk=m.pk))
    assert {c.pk for c in again} == first
    assert RatingChange.objects.filter(match=m).count() == 2
    assert _rating(alice) == 1520 and _rating(bob) == 1480
    assert PlayerRating.objects.get(user=alice).rated_matches == 1


def test_the_database_refuses_a_second_change_for_the_same_match(
    tables: Any, alice: Any, bob: Any
) -> None:
    from django.db import IntegrityError

    m = tables.ranked_result(alice, bob)
    with pytest.raises(IntegrityError), transaction.atomic():
        RatingChange.objects.create(player=alice, match=m, before=1520, after=1540, change=20, k=40)


@pytest.mark.django_db(transaction=True)
def test_settle_refuses_to_run_outside_a_transaction(tables: Any, alice: Any, bob: Any) -> None:
    m = tables.ranked_result(alice, bob)
    with pytest.raises(RuntimeError):
        settle_match(m)


def test_a_casual_match_never_changes_ratings(tables: Any, alice: Any, bob: Any) -> None:
    m = tables.resign(tables.start(tables.casual(alice, bob)), bob)
    assert m.status == Match.Status.FINISHED
    assert not RatingChange.objects.exists() and not PlayerRating.objects.exists()


def test_a_same_device_match_never_changes_ratings(tables: Any, alice: Any) -> None:
    m = tables.resign(tables.start(tables.same_device(alice)), alice)
    assert m.status == Match.Status.FINISHED
    assert not RatingChange.objects.exists()
    assert str(rating_of(alice)) == "1500?"


def test_an_aborted_ranked_match_never_changes_ratings(tables: Any, alice: Any, bob: Any) -> None:
    m = tables.ranked(alice, bob)
    # Leaving before the first decision is an abort (RULES §1).
    m = tables.resign(m, bob)
    assert m.status == Match.Status.ABORTED
    assert not RatingChange.objects.exists()


def test_a_voided_ranked_match_never_changes_ratings(tables: Any, alice: Any, bob: Any) -> None:
    from matches.clock import voiding

    m = tables.start(tables.ranked(alice, bob))
    assert voiding.void([m.pk], "worker lost") == [m.pk]
    m.refresh_from_db()
    assert m.status == Match.Status.VOIDED
    assert not RatingChange.objects.exists()
    # Nor would settle rate it if asked, even with a (bogus) winner recorded.
    m.winner_seat = 0
    with transaction.atomic():
        assert settle_match(m) == []
    assert not RatingChange.objects.exists() and not PlayerRating.objects.exists()


def test_k_switches_to_20_after_30_rated_matches(tables: Any, alice: Any, bob: Any) -> None:
    for i in range(31):
        # Alternate winners so that the ratings stay near 1500.
        if i % 2:
            tables.ranked_result(bob, alice, winner_seat=1)
        else:
            tables.ranked_result(alice, bob)
    ks = list(RatingChange.objects.filter(player=alice).order_by("id").values_list("k", flat=True))
    assert ks[:30] == [40] * 30
    assert ks[30] == 20
    assert PlayerRating.objects.get(user=alice).rated_matches == 31
    assert not rating_of(alice).provisional


def test_a_rating_shows_a_question_mark_while_provisional(
    tables: Any, alice: Any, bob: Any
) -> None:
    assert str(rating_of(alice)) == "1500?"
    tables.ranked_result(alice, bob)
    assert str(rating_of(alice)) == "1520?"
    assert rating_of(alice).provisional


def test_ratings_carry_over_between_matches(tables: Any, alice: Any, bob: Any) -> None:
    tables.ranked_result(alice, bob)  # 1520 / 1480
    m = tables.ranked_result(alice, bob, winner_seat=1)  # alice at seat 1 this time
    c = RatingChange.objects.get(match=m, player=alice)
    assert c.before == 1520
    # E(1520 vs 1480) ≈ 0.557: 40 × 0.443 = 17.7 → 18.
    assert c.change == 18 and _rating(alice) == 1538 and _rating(bob) == 1462
