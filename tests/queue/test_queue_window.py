"""The rating window widens with the time waited: ±100, +50 every 10 s, unbounded at 60 s."""

from __future__ import annotations

from typing import Any

import pytest

from matches.lobby import matchmaking as queue
from matches.models import QueueEntry

pytestmark = pytest.mark.django_db


def test_the_window_is_100_at_once_and_widens_by_50_every_10_seconds(
    alice: Any, clock: Any
) -> None:
    queue.join(alice)
    seen = {}
    for at in (0, 9, 10, 20, 50, 59, 60, 600):
        clock.move_to(queue_start(alice) + at)
        seen[at] = queue.status_of(alice)["window"]
    assert seen == {0: 100, 9: 100, 10: 150, 20: 200, 50: 350, 59: 350, 60: None, 600: None}


def test_the_status_shows_the_time_waited_and_the_window_as_text(alice: Any, clock: Any) -> None:
    queue.join(alice)
    clock.shift(12.5)
    status = queue.status_of(alice)
    assert status["in_queue"] is True
    assert status["waited_ms"] == 12_500
    assert status["window_text"] == "±150"
    clock.shift(60)
    assert queue.status_of(alice)["window_text"] == "±∞"


def test_a_player_outside_the_queue_has_no_window(alice: Any, clock: Any) -> None:
    status = queue.status_of(alice)
    assert status["in_queue"] is False
    assert status["window"] is None and status["joined_at"] is None
    assert status["rating"] == 1500


def test_joining_twice_keeps_the_first_join_time(alice: Any, clock: Any) -> None:
    queue.join(alice)
    clock.shift(15)
    queue.join(alice)
    assert QueueEntry.objects.filter(user=alice).count() == 1
    assert queue.status_of(alice)["window"] == 150


def test_the_window_rule_as_a_pure_function() -> None:
    assert [queue.window_at(s) for s in (0, 10, 50, 60)] == [100, 150, 350, None]


def queue_start(user: Any) -> float:
    return QueueEntry.objects.get(user=user).joined_at.timestamp()
