"""A decision chosen on a position that only had time given back since is applied.

Our own faults bump a match's version under a player's feet: after a web process
dies, the outage (or the seat's way back) is given back as a new version while the
move the player chose meanwhile is on its way. Refused as ``stale``, the player had
to make the move again (13 such refusals in one restart of the drill at 200
matches). Applied, as long as every change since its version only gave time back;
anything else since (a tile placed, a copy of the same move) leaves it stale.
"""

from __future__ import annotations

from typing import Any

import pytest
from matchplay import Table, frame_for, new_casual, snapshot

import engine
from matches.clock import outage
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.errors import ServiceError
from matches.play.store import TIME_ONLY_BEHIND

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(alice: Any, bob: Any, settings: Any) -> tuple[Table, engine.Action, int]:
    """A started match, its first legal action (a placement) and the start's time."""
    settings.DEAL_SEED = 5
    table = Table(new_casual(alice, bob), [alice, bob])
    t = timing.now_ms()
    table.start(t)
    s = table.state
    assert s is not None and s.to_act is not None
    action = engine.legal_actions(s)[0]
    assert action.kind == "place"
    return table, action, t


def _credits(table: Table, t: int, n: int) -> int:
    """``n`` outages of a second each from ``t``, each given back (a new version);
    returns when the last ended."""
    for i in range(n):
        version = table.version
        assert outage.credit_outage(t + 2_000 * i, t + 2_000 * i + 1_000) == [table.match_id]
        table.refresh()
        assert table.version == version + 1
    return t + 2_000 * n


def _kinds(table: Table, after: int) -> list[str]:
    return list(
        MatchEvent.objects.filter(match_id=table.match_id, version__gt=after)
        .order_by("id")
        .values_list("kind", flat=True)
    )


@pytest.mark.parametrize("credits", [1, 2, TIME_ONLY_BEHIND])
def test_a_move_chosen_before_time_was_given_back_is_applied(
    live: tuple[Table, engine.Action, int], credits: int
) -> None:
    table, action, t = live
    chosen_at = table.version
    frame = frame_for(action, chosen_at)
    end = _credits(table, t, credits)
    assert _kinds(table, chosen_at) == ["credit"] * credits

    out = table.send(action.player, frame, end + 500)

    assert out.error is None
    assert table.version == chosen_at + credits + 1
    placed = MatchEvent.objects.get(match_id=table.match_id, version=table.version, kind="place")
    assert placed.data["player"] == action.player
    assert tuple(placed.data["tile"]) == tuple(action.tile)
    s = table.state
    assert s is not None and action.tile not in s.hands[action.player]


def test_the_same_move_sent_again_after_it_was_applied_is_stale(
    live: tuple[Table, engine.Action, int],
) -> None:
    table, action, t = live
    chosen_at = table.version
    frame = frame_for(action, chosen_at)
    end = _credits(table, t, 1)
    assert table.send(action.player, frame, end + 500).error is None
    before = snapshot(table.match_id)

    with pytest.raises(ServiceError) as e:
        table.send(action.player, frame, end + 600)  # a copy, resent on a reconnect
    assert e.value.code == "stale"
    assert e.value.version == table.version
    assert snapshot(table.match_id) == before


def test_a_move_after_a_move_since_its_version_is_stale_even_with_credits_between(
    live: tuple[Table, engine.Action, int],
) -> None:
    table, action, t = live
    chosen_at = table.version
    end = _credits(table, t, 1)
    table.do(action, end + 100)  # the position moves on
    s = table.state
    assert s is not None and s.to_act is not None
    end = _credits(table, end + 200, 1)
    reply = engine.legal_actions(s)[0]
    before = snapshot(table.match_id)

    with pytest.raises(ServiceError) as e:
        # Chosen on the position before the first move: not the board's any more.
        table.send(reply.player, frame_for(reply, chosen_at), end + 500)
    assert e.value.code == "stale"
    assert snapshot(table.match_id) == before


def test_a_move_further_behind_than_the_bound_is_stale(
    live: tuple[Table, engine.Action, int],
) -> None:
    table, action, t = live
    chosen_at = table.version
    end = _credits(table, t, TIME_ONLY_BEHIND + 1)
    before = snapshot(table.match_id)

    with pytest.raises(ServiceError) as e:
        table.send(action.player, frame_for(action, chosen_at), end + 500)
    assert e.value.code == "stale"
    assert snapshot(table.match_id) == before


def test_a_version_whose_change_left_no_events_is_stale(
    live: tuple[Table, engine.Action, int],
) -> None:
    table, action, t = live
    chosen_at = table.version
    # A version written without its events (what it changed is not known).
    Match.objects.filter(pk=table.match_id).update(version=chosen_at + 1)
    table.refresh()
    before = snapshot(table.match_id)

    with pytest.raises(ServiceError) as e:
        table.send(action.player, frame_for(action, chosen_at), t + 500)
    assert e.value.code == "stale"
    assert snapshot(table.match_id) == before


def test_a_version_ahead_of_the_match_is_stale_even_after_credits(
    live: tuple[Table, engine.Action, int],
) -> None:
    table, action, t = live
    end = _credits(table, t, 1)
    before = snapshot(table.match_id)

    with pytest.raises(ServiceError) as e:
        table.send(action.player, frame_for(action, table.version + 1), end + 500)
    assert e.value.code == "stale"
    assert snapshot(table.match_id) == before
