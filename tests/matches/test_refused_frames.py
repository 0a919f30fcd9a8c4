"""A refused frame gets a clear error code and changes nothing.

Every case asserts the code *and* that the match row (version, state, status)
and its event log are exactly as before. Frames that never reach the services
(not JSON, too large) are covered in test_consumers.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from matchplay import Table, frame_for, in_phase, new_casual, play_to, snapshot

import engine
from matches.play import timing
from matches.play.act import act
from matches.play.errors import ServiceError
from matches.play.store import current_view

pytestmark = pytest.mark.django_db

Frame = Callable[[Table, engine.MatchState], dict[str, Any]]


@pytest.fixture
def table(alice: Any, bob: Any) -> Table:
    return Table(new_casual(alice, bob), [alice, bob])


@pytest.fixture
def live(table: Table, settings: Any) -> tuple[Table, engine.MatchState, int]:
    """A started match; the player to act has a legal placement."""
    settings.DEAL_SEED = 5
    t = timing.now_ms()
    table.start(t)
    s = table.state
    assert s is not None and s.to_act is not None
    assert engine.legal_actions(s)[0].kind == "place"
    return table, s, t + 1_000


def _place(table: Table, s: engine.MatchState) -> dict[str, Any]:
    """The frame of a legal placement by the player to act."""
    return frame_for(engine.legal_actions(s)[0], table.version)


def _with(**changes: Any) -> Frame:
    def build(table: Table, s: engine.MatchState) -> dict[str, Any]:
        frame = _place(table, s)
        frame.update(changes)
        return frame

    return build


def _with_at(**changes: Any) -> Frame:
    def build(table: Table, s: engine.MatchState) -> dict[str, Any]:
        frame = _place(table, s)
        frame["at"] = {**frame["at"], **changes}
        return frame

    return build


def _without(key: str) -> Frame:
    def build(table: Table, s: engine.MatchState) -> dict[str, Any]:
        frame = _place(table, s)
        del frame[key]
        return frame

    return build


def _bid(amount: Any) -> Frame:
    return lambda table, s: {"op": "bid", "amount": amount, "version": table.version}


def _version(delta: int) -> Frame:
    def build(table: Table, s: engine.MatchState) -> dict[str, Any]:
        frame = _place(table, s)
        frame["version"] = table.version + delta
        return frame

    return build


def _at_as_list(table: Table, s: engine.MatchState) -> dict[str, Any]:
    frame = _place(table, s)
    frame["at"] = [frame["at"]["tile"], frame["at"]["side"]]
    return frame


def _not_in_hand(table: Table, s: engine.MatchState) -> dict[str, Any]:
    # The engine checks the hand before the position: any opponent tile will do.
    p = s.to_act
    assert p is not None
    pos = s.layout.legal_positions()[0]
    return {
        "op": "place",
        "tile": list(s.hands[1 - p][0]),
        "at": {"tile": list(pos[0]), "side": pos[1]},
        "version": table.version,
    }


BAD_SHAPES: dict[str, Frame] = {
    "a version as a string": _with(version="3"),
    "a tile as a string": _with(tile="1-4"),
    "a tile with a string half": _with(tile=[1, "4"]),
    "a tile with a float half": _with(tile=[1.0, 4]),
    "a tile of three halves": _with(tile=[1, 2, 3]),
    "a tile with a half of 7": _with(tile=[1, 7]),
    "a negative version": _with(version=-1),
    "a version that is a bool": _with(version=True),
    "at as a list": _at_as_list,
    "side north": _with_at(side="north"),
    "at without a tile": _with_at(tile=None),
    "an unknown op": _with(op="draw"),
    "a made-up op": _with(op="cheat"),
    "an op that is not a string": _with(op=1),
    "no version": _without("version"),
    "no op": _without("op"),
    "a bid of 20.0": _bid(20.0),
    "a bid of True": _bid(True),
    "a bid as a string": _bid("20"),
    "a bid with no amount": _bid(None),
}


@pytest.mark.parametrize("build", BAD_SHAPES.values(), ids=BAD_SHAPES.keys())
def test_a_malformed_frame_is_a_bad_request_and_changes_nothing(
    live: tuple[Table, engine.MatchState, int], build: Frame
) -> None:
    table, s, t = live
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(s.to_act or 0, build(table, s), t)
    assert e.value.code == "bad_request"
    assert e.value.message
    assert snapshot(table.match_id) == before


@pytest.mark.parametrize("frame", [None, [], "place", 17, [{"op": "sync"}]])
def test_a_frame_that_is_no_object_is_a_bad_request(
    live: tuple[Table, engine.MatchState, int], frame: Any
) -> None:
    table, s, t = live
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(0, frame, t)
    assert e.value.code == "bad_request"
    assert snapshot(table.match_id) == before


@pytest.mark.parametrize("delta", [-1, -2, 1, 100], ids=["old", "oldest", "new", "far ahead"])
def test_a_stale_version_is_refused_with_the_current_one(
    live: tuple[Table, engine.MatchState, int], delta: int
) -> None:
    table, s, t = live
    assert table.version + delta >= 0
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(s.to_act or 0, _version(delta)(table, s), t)
    assert e.value.code == "stale"
    assert e.value.version == table.version
    assert snapshot(table.match_id) == before


def test_a_move_out_of_turn_is_refused(live: tuple[Table, engine.MatchState, int]) -> None:
    table, s, t = live
    p = s.to_act
    assert p is not None
    other = 1 - p
    values = {v for _, _, v in s.layout.legal_positions()}
    tile = next((x for x in s.hands[other] if x[0] in values or x[1] in values), s.hands[other][0])
    pos = s.layout.legal_positions()[0]
    frame = {
        "op": "place",
        "tile": list(tile),
        "at": {"tile": list(pos[0]), "side": pos[1]},
        "version": table.version,
    }
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(other, frame, t)
    assert e.value.code == "not_your_turn"
    assert snapshot(table.match_id) == before


def test_a_tile_not_in_hand_is_refused(live: tuple[Table, engine.MatchState, int]) -> None:
    table, s, t = live
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(s.to_act or 0, _not_in_hand(table, s), t)
    assert e.value.code == "not_in_hand"
    assert snapshot(table.match_id) == before


def test_a_tile_at_a_position_that_is_not_open_is_refused(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = live
    frame = _place(table, s)
    frame["at"] = {"tile": [0, 0] if frame["at"]["tile"] != [0, 0] else [6, 6], "side": "low"}
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.send(s.to_act or 0, frame, t)
    assert e.value.code == "bad_position"
    assert snapshot(table.match_id) == before


def test_someone_else_s_match_is_refused(
    live: tuple[Table, engine.MatchState, int], outsider: Any
) -> None:
    table, s, t = live
    before = snapshot(table.match_id)
    for frame in (_place(table, s), {"op": "sync"}, {"op": "resign", "version": table.version}):
        with pytest.raises(ServiceError) as e:
            act(table.match_id, outsider, frame, t)
        assert e.value.code == "not_a_player"
    with pytest.raises(ServiceError) as e:
        current_view(table.match_id, outsider)
    assert e.value.code == "not_a_player"
    assert snapshot(table.match_id) == before


def test_an_unknown_match_is_not_found(live: tuple[Table, engine.MatchState, int]) -> None:
    table, s, t = live
    with pytest.raises(ServiceError) as e:
        act(table.match_id + 1000, table.users[0], {"op": "sync"}, t)
    assert e.value.code == "not_found"


def test_a_finished_match_refuses_every_action(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = live
    table.op(0, "resign", t)
    assert table.match.is_over
    before = snapshot(table.match_id)
    frames = [
        _place(table, s),
        {"op": "resign", "version": table.version},
        {"op": "flag", "version": table.version},
        {"op": "continue", "version": table.version},
        {"op": "start", "version": table.version},
    ]
    for frame in frames:
        with pytest.raises(ServiceError) as e:
            table.send(1, frame, t + 1_000)
        assert e.value.code == "match_over"
    assert snapshot(table.match_id) == before


def test_an_action_before_the_start_is_refused(table: Table) -> None:
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(0, "decline", timing.now_ms())
    assert e.value.code == "not_started"
    assert snapshot(table.match_id) == before


@pytest.fixture
def auction(table: Table, settings: Any) -> tuple[Table, engine.MatchState, int]:
    _, t = play_to(table, in_phase(engine.AUCTION), settings=settings)
    s = table.state
    assert s is not None and s.bid is None
    return table, s, t


@pytest.mark.parametrize("amount", [17, 21, 0, -15, 10, 5])
def test_a_bid_that_is_no_multiple_of_5_or_below_15_is_refused(
    auction: tuple[Table, engine.MatchState, int], amount: int
) -> None:
    table, s, t = auction
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(s.to_act or 0, "bid", t, amount=amount)
    assert e.value.code == "bad_amount"
    assert snapshot(table.match_id) == before


def test_a_bid_beyond_the_balance_is_refused(auction: tuple[Table, engine.MatchState, int]) -> None:
    table, s, t = auction
    p = s.to_act
    assert p is not None
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(p, "bid", t, amount=s.balances[p] + 5)
    assert e.value.code == "unaffordable"
    assert snapshot(table.match_id) == before


def test_a_decline_is_refused_when_a_bid_stands(
    auction: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = auction
    table.op(s.to_act or 0, "bid", t, amount=15)
    s = table.state
    assert s is not None and s.bid is not None
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(s.to_act or 0, "decline", t + 1_000)
    assert e.value.code == "bid_standing"
    assert snapshot(table.match_id) == before


def test_accepting_without_a_bid_is_refused(
    auction: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = auction
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(s.to_act or 0, "accept", t)
    assert e.value.code == "no_bid"
    assert snapshot(table.match_id) == before


def test_a_placement_during_the_auction_is_refused(
    auction: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = auction
    p = s.to_act
    assert p is not None
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(p, "place", t, tile=list(s.hands[p][0]))
    assert e.value.code == "bad_phase"
    assert snapshot(table.match_id) == before


def test_a_reveal_outside_same_device_play_is_refused(
    live: tuple[Table, engine.MatchState, int],
) -> None:
    table, s, t = live
    before = snapshot(table.match_id)
    with pytest.raises(ServiceError) as e:
        table.op(s.to_act or 0, "reveal", t)
    assert e.value.code == "not_awaiting"
    assert snapshot(table.match_id) == before
