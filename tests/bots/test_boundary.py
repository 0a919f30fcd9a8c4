"""The player takes a seat's view as plain JSON data and nothing else."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import engine
from bots import Memory, NotAView, Player, decide
from engine import Deal, MatchState


def started() -> MatchState:
    """A match after its forced opening, seat 0 or 1 to decide."""
    s = engine.new_match(Deal.shuffled(random.Random(3)), clock=None)
    s, _ = engine.apply(s, engine.forced_action(s), 0)
    return s


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_match_state_is_refused_not_read(level: int) -> None:
    s = started()
    with pytest.raises(NotAView, match="plain JSON"):
        decide(s, level=level, rng=random.Random(1))
    with pytest.raises(NotAView):
        Player(level, random.Random(1)).observe(s)


@pytest.mark.parametrize(
    "smuggle",
    [
        lambda v, s: {**v, "hand": s},
        lambda v, s: {**v, "extra": {"state": s}},
        lambda v, s: {**v, "events": [*v["events"], s]},
        lambda v, s: {**v, "layout": [*v["layout"], s.talon.__iter__()]},
    ],
    ids=["as the hand", "deep inside", "as an event", "as an iterator"],
)
def test_a_view_holding_a_non_json_object_is_refused(smuggle: Any) -> None:
    s = started()
    view = engine.view_for(s, s.to_act, 0)
    with pytest.raises(NotAView):
        decide(smuggle(view, s), level=2, rng=random.Random(1))


def test_a_history_holding_the_state_is_refused() -> None:
    s = started()
    view = engine.view_for(s, s.to_act, 0)
    with pytest.raises(NotAView):
        decide(view, [s], level=3, rng=random.Random(1))
    with pytest.raises(NotAView):
        Memory().update(s)


def test_a_spectator_view_or_a_bare_list_is_not_a_seat_view() -> None:
    s = started()
    with pytest.raises(NotAView, match="seat"):
        decide(engine.view_for(s, None, 0), level=2, rng=random.Random(1))
    with pytest.raises(NotAView):
        decide([engine.view_for(s, 0, 0)], level=2, rng=random.Random(1))


def test_a_memory_belongs_to_one_seat() -> None:
    s = started()
    m = Memory()
    m.update(engine.view_for(s, 0, 0))
    with pytest.raises(ValueError, match="seat 0"):
        m.update(engine.view_for(s, 1, 0))


@pytest.mark.parametrize("level", [1, 2, 3])
def test_nothing_is_decided_off_turn_or_when_the_server_forces_the_action(level: int) -> None:
    s = engine.new_match(Deal.shuffled(random.Random(3)), clock=None)
    holder = s.to_act
    assert holder is not None
    forced_view = engine.view_for(s, holder, 0)
    assert forced_view["forced"] == "place"  # the forced opening
    assert decide(forced_view, level=level, rng=random.Random(1)) is None
    s, _ = engine.apply(s, engine.forced_action(s), 0)
    assert decide(engine.view_for(s, holder, 0), level=level, rng=random.Random(1)) is None


def test_the_callers_view_is_left_as_it_was() -> None:
    s = started()
    view = engine.view_for(s, s.to_act, 0)
    before = copy.deepcopy(view)
    assert decide(view, level=3, rng=random.Random(1), playouts=20) is not None
    assert view == before
