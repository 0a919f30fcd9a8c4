"""The rules of RULES.md, one at a time, through the engine's public API only."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

import engine
from engine import Action, ClockConfig, Deal, IllegalAction, MatchState

Tile = tuple[int, int]
CLOCK = ClockConfig(main_ms=120_000, delay_ms=10_000)

# The seed page's layout sequence (RULES §4): seat 0 and seat 1 alternate.
SEED_HANDS = (
    [(1, 4), (4, 4), (1, 2), (5, 5), (1, 3), (6, 6), (2, 6)],
    [(1, 1), (3, 4), (1, 5), (0, 5), (0, 0), (2, 3), (3, 6)],
)
SEED_TALON = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 6),
    (1, 6),
    (2, 2),
    (2, 4),
    (2, 5),
    (3, 3),
    (3, 5),
    (4, 5),
    (4, 6),
    (5, 6),
]


def deal(h0: Iterable[Tile], h1: Iterable[Tile], talon: Iterable[Tile] = ()) -> Deal:
    return Deal((tuple(h0), tuple(h1)), tuple(talon))


def seed_deal() -> Deal:
    return deal(SEED_HANDS[0], SEED_HANDS[1], SEED_TALON)


def act(s: MatchState, kind: str, player: int, t: int = 0, **kw: Any) -> MatchState:
    new, _ = engine.apply(s, Action(kind, player, **kw), t)
    return new


def place(
    s: MatchState,
    player: int,
    tile: Tile,
    on: Tile | None = None,
    side: str | None = None,
    t: int = 0,
) -> MatchState:
    at = None if on is None else (on, side)
    return act(s, "place", player, t, tile=tile, at=at)


def rejected(s: MatchState, action: Action, t: int = 0) -> str:
    """Apply an action that must be refused; check nothing changed; return its code."""
    before = engine.to_dict(s)
    with pytest.raises(IllegalAction) as info:
        engine.apply(s, action, t)
    assert engine.to_dict(s) == before, "a rejected action changed the state"
    return info.value.code


def ends_of(s: MatchState) -> list[tuple[Tile, int]]:
    return sorted((tuple(e["tile"]), e["value"]) for e in engine.snapshot(s, 0)["ends"])  # type: ignore[misc]


def opened_by_seat0(d: Deal, **kw: Any) -> MatchState:
    """Jockey 0, seat 1 declines: seat 0 opens with any tile."""
    s = engine.new_match(d, jockey=0, clock=None, **kw)
    return act(s, "decline", 1)


# --- RULES §4: the worked examples ------------------------------------------

# (placer, tile, on, side, counted ends after it, points moved)
SEED_SEQUENCE = [
    (0, (1, 4), None, None, [((1, 4), 1), ((1, 4), 4)], 5),
    (1, (1, 1), (1, 4), "low", [((1, 1), 2), ((1, 4), 4)], 0),
    (0, (4, 4), (1, 4), "high", [((1, 1), 2), ((4, 4), 8)], 10),
    (1, (3, 4), (4, 4), "straight_b", [((1, 1), 2), ((3, 4), 3)], 5),
    (0, (1, 2), (1, 1), "straight_b", [((1, 2), 2), ((3, 4), 3)], 5),
    (1, (1, 5), (1, 1), "branch_a", [((1, 2), 2), ((1, 5), 5), ((3, 4), 3)], 10),
    (0, (5, 5), (1, 5), "high", [((1, 2), 2), ((3, 4), 3), ((5, 5), 10)], 15),
    (1, (0, 5), (5, 5), "straight_b", [((0, 5), 0), ((1, 2), 2), ((3, 4), 3)], 5),
    (0, (1, 3), (1, 1), "branch_b", [((0, 5), 0), ((1, 2), 2), ((1, 3), 3), ((3, 4), 3)], 0),
]


@pytest.mark.parametrize("row", range(len(SEED_SEQUENCE)), ids=lambda r: f"row{r}")
def test_it_counts_the_seed_pages_layout_sequence(row: int) -> None:
    s = opened_by_seat0(seed_deal())
    for player, tile, on, side, _, _ in SEED_SEQUENCE[:row]:
        s = place(s, player, tile, on, side)
    player, tile, on, side, ends, moves = SEED_SEQUENCE[row]
    before = list(s.balances)
    s = place(s, player, tile, on, side)
    assert ends_of(s) == sorted(ends)
    assert engine.snapshot(s, 0)["end_total"] == sum(v for _, v in ends)
    assert s.balances[player] - before[player] == moves
    assert s.balances[1 - player] - before[1 - player] == -moves
    assert s.to_act == 1 - player, "the opponent's turn, whether or not anything scored"
    assert s.layout.spinner == ((1, 1) if row >= 1 else None)


def test_it_counts_a_later_double_on_the_high_end_as_the_spinner_for_15() -> None:
    s = opened_by_seat0(deal([(3, 6), (0, 1)], [(6, 6), (0, 2)]))
    s = place(s, 0, (3, 6))
    assert ends_of(s) == [((3, 6), 3), ((3, 6), 6)] and s.balances == [150, 150]
    s = place(s, 1, (6, 6), (3, 6), "high")
    assert s.layout.spinner == (6, 6)
    assert ends_of(s) == [((3, 6), 3), ((6, 6), 12)]
    assert s.balances == [135, 165]


@pytest.mark.parametrize(("tile", "total"), [((0, 0), 0), ((2, 2), 4), ((5, 5), 10)])
def test_it_counts_a_lone_opening_double_once(tile: Tile, total: int) -> None:
    s = opened_by_seat0(deal([tile, (0, 1)], [(3, 4)]))
    s = place(s, 0, tile)
    assert ends_of(s) == [(tile, total)]
    assert s.balances == ([160, 140] if total == 10 else [150, 150])


def test_it_rejects_a_branch_before_both_straight_sides_are_taken() -> None:
    s = opened_by_seat0(seed_deal())
    for player, tile, on, side, _, _ in SEED_SEQUENCE[:4]:
        s = place(s, player, tile, on, side)
    code = rejected(s, Action("place", 0, tile=(1, 3), at=((1, 1), "branch_a")))
    assert code == "bad_position"


def test_it_never_branches_a_later_double() -> None:
    s = opened_by_seat0(seed_deal())
    for player, tile, on, side, _, _ in SEED_SEQUENCE[:4]:
        s = place(s, player, tile, on, side)
    sides = {side for t, side, _ in s.layout.legal_positions() if t == (4, 4)}
    assert sides == set(), "[4|4] is interior now and never a spinner"
    code = rejected(s, Action("place", 0, tile=(1, 2), at=((4, 4), "branch_a")))
    assert code == "bad_position"


def test_it_scores_a_spinner_opening_zero_once_closed_and_its_branches_later() -> None:
    # [3|3] opens; both straight sides taken: the spinner counts 0, branches are open.
    s = opened_by_seat0(deal([(3, 3), (1, 3), (0, 6)], [(3, 5), (2, 3), (4, 6)]))
    s = place(s, 0, (3, 3))
    assert ends_of(s) == [((3, 3), 6)]
    s = place(s, 1, (3, 5), (3, 3), "straight_a")
    assert ends_of(s) == [((3, 3), 6), ((3, 5), 5)]
    s = place(s, 0, (1, 3), (3, 3), "straight_b")
    assert ends_of(s) == [((1, 3), 1), ((3, 5), 5)]
    assert {side for t, side, _ in s.layout.legal_positions() if t == (3, 3)} == {
        "branch_a",
        "branch_b",
    }
    # The blank total 6 scored nothing; [1|3] then 6 scored nothing for seat 0 either.
    assert s.balances == [150, 150]


def test_it_rejects_a_tile_that_does_not_match_the_end() -> None:
    s = place(opened_by_seat0(seed_deal()), 0, (1, 4))
    code = rejected(s, Action("place", 1, tile=(0, 5), at=((1, 4), "low")))
    assert code == "no_match"


def test_it_rejects_an_at_for_the_opening_tile_and_a_missing_at_later() -> None:
    s = opened_by_seat0(seed_deal())
    assert rejected(s, Action("place", 0, tile=(1, 4), at=((1, 4), "low"))) == "bad_position"
    s = place(s, 0, (1, 4))
    assert rejected(s, Action("place", 1, tile=(1, 1))) == "bad_position"


# --- RULES §5: blocks, going out ---------------------------------------------


def blocked(h0_rest: list[Tile], h1: list[Tile], balances: tuple[int, int]) -> MatchState:
    """A forced [6|6] opening by seat 0, then both pass: nothing else holds a six."""
    s = engine.new_match(deal([(6, 6), *h0_rest], h1), clock=None, balances=balances)
    assert engine.forced_action(s) == Action("place", 0, tile=(6, 6))
    s = place(s, 0, (6, 6))
    s = act(s, "pass", 1)
    assert s.phase == engine.PLAY
    return act(s, "pass", 0)


@pytest.mark.parametrize(
    ("h0", "h1", "balances"),
    [
        ([(0, 4)], [(3, 5), (5, 5)], [170, 130]),  # 4 vs 18 -> 20
        ([(0, 4)], [(3, 5), (4, 5)], [165, 135]),  # 4 vs 17 -> 15
        ([(1, 5)], [(2, 4)], [150, 150]),  # 6 vs 6 -> 0
        ([(0, 0)], [(0, 2)], [150, 150]),  # 0 vs 2 -> 0
        ([(3, 5), (4, 5)], [(0, 4)], [135, 165]),  # the light side is seat 1
    ],
    ids=["4v18", "4v17", "6v6", "0v2", "light-seat-1"],
)
def test_it_settles_a_block_rounding_the_heavy_total(
    h0: list[Tile], h1: list[Tile], balances: list[int]
) -> None:
    s = blocked(h0, h1, (150, 150))
    assert s.phase == engine.HAND_OVER and s.hand_end == "block"
    assert s.balances == balances
    assert s.settlement is not None and s.settlement["how"] == "block"
    s2, _ = engine.next_hand(s, seed_deal(), 0)
    # After a block: forced opening again and no jockey; seed deal's highest double [6|6].
    assert s2.jockey is None and s2.phase == engine.PLAY
    assert engine.forced_action(s2) == Action("place", 0, tile=(6, 6))


def test_it_caps_a_block_payment_at_the_payers_balance_and_ends_the_match() -> None:
    s = blocked([(0, 4)], [(3, 5), (5, 5)], (290, 10))
    assert s.balances == [300, 0]
    assert (s.phase, s.winner, s.end, s.hand_end) == (engine.MATCH_OVER, 0, "balance", "block")


def test_it_caps_a_score_at_the_payers_balance_and_ends_the_match_mid_hand() -> None:
    s = opened_by_seat0(deal([(5, 5), (0, 1)], [(2, 3), (0, 2)]), balances=(295, 5))
    s = place(s, 0, (5, 5))
    assert s.balances == [300, 0]
    assert (s.phase, s.winner, s.end, s.hand_end) == (engine.MATCH_OVER, 0, "balance", None)
    assert rejected(s, Action("place", 1, tile=(2, 3), at=((5, 5), "straight_a"))) == "match_over"
    assert rejected(s, Action("resign", 1)) == "match_over"


def test_going_out_makes_the_jockey_and_scores_nothing_for_the_opponents_pips() -> None:
    d = deal([(1, 4), (4, 5)], [(1, 1), (6, 6), (2, 3)])
    s = engine.new_match(d, jockey=1, clock=None)
    s = act(act(s, "bid", 0, amount=15), "accept", 1)
    assert s.balances == [135, 165] and s.to_act == 0
    s = place(s, 0, (1, 4))
    s = place(s, 1, (1, 1), (1, 4), "low")
    s = place(s, 0, (4, 5), (1, 4), "high")  # 2 + 5 = 7: no score, and seat 0 is out
    assert (s.phase, s.hand_end, s.balances) == (engine.HAND_OVER, "domino", [140, 160])
    assert s.jockey == 1, "the jockey of the hand just played, until next_hand"
    assert s.settlement is not None
    assert (s.settlement["went_out"], s.settlement["moved"], s.settlement["pips"]) == (
        0,
        0,
        [0, 17],
    )
    s2, _ = engine.next_hand(s, seed_deal(), 0)
    assert (s2.phase, s2.jockey, s2.to_act, s2.balances) == (engine.AUCTION, 0, 1, [140, 160])


def test_going_out_with_a_score_that_ends_the_match_is_still_a_domino() -> None:
    s = opened_by_seat0(deal([(5, 5)], [(1, 2)]), balances=(290, 10))
    s = place(s, 0, (5, 5))
    assert (s.phase, s.winner, s.end, s.hand_end) == (engine.MATCH_OVER, 0, "balance", "domino")
    assert s.balances == [300, 0]


def drawing_state(clock: ClockConfig | None = None) -> MatchState:
    """Seat 1 must draw after seat 0 opens [6|6]: it holds no six; the talon's
    top tiles are [0|1] (no fit) then [2|6] (fits)."""
    d = deal([(6, 6), (0, 4)], [(3, 5), (1, 2)], [(0, 1), (2, 6), (0, 3)])
    s = engine.new_match(d, clock=clock)
    return place(s, 0, (6, 6), t=1000)


def test_it_makes_a_player_draw_until_a_tile_fits_and_place_that_tile() -> None:
    s = drawing_state()
    assert engine.forced_action(s) == Action("draw", 1)
    assert rejected(s, Action("pass", 1)) == "must_draw"
    s = act(s, "draw", 1)
    assert s.to_act == 1 and s.hands[1][-1] == (0, 1)
    s = act(s, "draw", 1)
    assert engine.forced_action(s) is None
    assert rejected(s, Action("draw", 1)) == "must_place"
    assert {a.tile for a in engine.legal_actions(s)} == {(2, 6)}
    assert len(s.talon) == 1
    s = place(s, 1, (2, 6), (6, 6), "straight_a")
    assert s.to_act == 0 and (2, 6) not in s.hands[1]


def test_it_rejects_a_draw_or_pass_while_a_tile_fits() -> None:
    s = place(opened_by_seat0(seed_deal()), 0, (1, 4))
    assert rejected(s, Action("draw", 1)) == "must_place"
    assert rejected(s, Action("pass", 1)) == "must_place"


def test_a_forced_opening_ignores_the_talon_and_breaks_ties_by_the_higher_half() -> None:
    d = deal([(3, 5), (0, 1)], [(2, 6), (0, 2)], [(6, 6), (5, 5)])
    s = engine.new_match(d, clock=None)
    assert engine.forced_action(s) == Action("place", 1, tile=(2, 6))
    assert rejected(s, Action("place", 1, tile=(0, 2))) == "forced_opening"
    assert rejected(s, Action("place", 0, tile=(3, 5))) == "not_your_turn"
    d = deal([(0, 0), (5, 6)], [(4, 6), (1, 1)])
    assert engine.forced_action(engine.new_match(d, clock=None)) == Action("place", 1, tile=(1, 1))


# --- RULES §6: the auction -------------------------------------------------


def auction(balances: tuple[int, int] = (150, 150), jockey: int = 0) -> MatchState:
    return engine.new_match(seed_deal(), jockey=jockey, clock=None, balances=balances)


def test_the_non_jockey_acts_first_and_may_decline_for_a_free_jockey_opening() -> None:
    s = auction()
    assert (s.phase, s.to_act) == (engine.AUCTION, 1)
    assert rejected(s, Action("bid", 0, amount=15)) == "not_your_turn"
    s = act(s, "decline", 1)
    assert (s.phase, s.to_act, s.balances) == (engine.PLAY, 0, [150, 150])
    # Any tile may open after an auction.
    assert {a.tile for a in engine.legal_actions(s)} == set(SEED_HANDS[0])


def test_an_accepted_bid_is_paid_by_its_bidder_who_then_opens() -> None:
    s = act(auction(), "bid", 1, amount=15)
    assert s.to_act == 0 and s.bid == (1, 15)
    s = act(s, "accept", 0)
    assert (s.phase, s.to_act, s.balances, s.bid) == (engine.PLAY, 1, [165, 135], None)


def test_the_jockey_pays_15_less_for_its_own_accepted_bid() -> None:
    s = act(act(auction(), "bid", 1, amount=15), "bid", 0, amount=20)
    s = act(s, "accept", 1)
    assert (s.balances, s.to_act) == ([145, 155], 0)


def test_a_raise_war_is_paid_at_the_last_bid_with_the_discount_only_for_the_jockey() -> None:
    s = act(act(act(auction(), "bid", 1, amount=15), "bid", 0, amount=25), "bid", 1, amount=30)
    s = act(s, "accept", 0)
    assert s.balances == [180, 120]
    s = act(act(auction(jockey=1), "bid", 0, amount=15), "bid", 1, amount=15 + 5)
    s = act(s, "accept", 0)
    assert s.balances == [155, 145] and s.to_act == 1


def test_the_discount_is_not_received_by_the_jockey_when_the_opponent_pays() -> None:
    s = act(act(act(auction(), "bid", 1, amount=15), "bid", 0, amount=20), "bid", 1, amount=25)
    s = act(s, "accept", 0)
    assert s.balances == [175, 125]


@pytest.mark.parametrize(
    ("amount", "code"),
    [(10, "bad_amount"), (17, "bad_amount"), (0, "bad_amount"), (-15, "bad_amount")],
)
def test_it_rejects_a_bid_below_15_or_off_the_five_step(amount: int, code: str) -> None:
    assert rejected(auction(), Action("bid", 1, amount=amount)) == code


def test_it_rejects_a_raise_of_less_than_5_and_a_decline_once_a_bid_stands() -> None:
    s = act(auction(), "bid", 1, amount=20)
    assert rejected(s, Action("bid", 0, amount=20)) == "bad_amount"
    assert rejected(s, Action("decline", 0)) == "bid_standing"
    assert rejected(s, Action("place", 0, tile=(1, 4))) == "bad_phase"
    assert rejected(auction(), Action("accept", 1)) == "no_bid"


def test_it_rejects_an_unaffordable_bid_and_allows_the_whole_balance() -> None:
    s = auction(balances=(260, 40))
    assert rejected(s, Action("bid", 1, amount=45)) == "unaffordable"
    assert engine.max_bid(s, 1) == 40
    s = act(s, "bid", 1, amount=40)
    s = act(s, "accept", 0)
    assert s.balances == [300, 0]
    assert (s.phase, s.winner, s.end, s.hand_end) == (engine.MATCH_OVER, 0, "balance", None)
    assert s.layout.empty, "the match ends before the opening tile"


def test_a_jockey_paying_its_whole_balance_loses() -> None:
    s = act(auction(balances=(10, 290)), "bid", 1, amount=15)
    assert engine.max_bid(s, 0) == 25
    assert rejected(s, Action("bid", 0, amount=30)) == "unaffordable"
    s = act(act(s, "bid", 0, amount=25), "accept", 1)
    assert s.balances == [0, 300] and (s.winner, s.end) == (1, "balance")


def test_a_non_jockey_who_cannot_afford_15_must_decline() -> None:
    s = auction(balances=(290, 10))
    assert engine.forced_action(s) == Action("decline", 1)
    assert engine.legal_actions(s) == [Action("decline", 1)]
    assert rejected(s, Action("bid", 1, amount=15)) == "unaffordable"


def test_a_player_who_cannot_afford_the_raise_must_accept() -> None:
    # The jockey (seat 0) holds 5: a raise to 30 would cost 15.
    s = act(auction(balances=(5, 295)), "bid", 1, amount=25)
    assert engine.forced_action(s) == Action("accept", 0)
    assert engine.legal_actions(s) == [Action("accept", 0)]
    s = act(s, "accept", 0)
    assert s.balances == [30, 270] and s.to_act == 1


def test_the_jockeys_minimum_raise_is_measured_after_its_discount() -> None:
    # A raise to 20 costs the jockey 5: with 5 it may raise (and would lose if
    # accepted); with 4 it must accept.
    s = act(auction(balances=(5, 295)), "bid", 1, amount=15)
    assert engine.forced_action(s) is None and engine.max_bid(s, 0) == 20
    s = act(act(s, "bid", 0, amount=20), "accept", 1)
    assert s.balances == [0, 300] and (s.winner, s.end) == (1, "balance")
    s = act(auction(balances=(4, 296)), "bid", 1, amount=15)
    assert engine.forced_action(s) == Action("accept", 0)
    assert engine.legal_actions(s) == [Action("accept", 0)]
    s = act(s, "accept", 0)
    assert s.balances == [19, 281] and s.to_act == 1


# --- RULES §7: the clock ----------------------------------------------------


def timed_auction(handoff: bool = False) -> MatchState:
    return engine.new_match(seed_deal(), jockey=0, clock=CLOCK, handoff=handoff)


def test_a_decision_within_the_delay_uses_no_main_time() -> None:
    s = act(timed_auction(), "decline", 1, t=8000)
    assert s.main == [120_000, 120_000]


def test_a_13_second_decision_uses_3_seconds() -> None:
    s = act(timed_auction(), "decline", 1, t=13_000)
    assert s.main == [120_000, 117_000]
    assert engine.clocks_at(s, 13_000) == [120_000, 117_000]
    # Seat 0's decision started at 13 s with a fresh delay.
    assert engine.clocks_at(s, 23_000) == [120_000, 117_000]
    assert engine.clocks_at(s, 24_500) == [118_500, 117_000]
    assert engine.deadline(s) == 13_000 + 10_000 + 120_000


def test_an_action_arriving_exactly_at_the_deadline_loses_on_time() -> None:
    s = timed_auction()
    dl = engine.deadline(s)
    assert dl == 130_000
    assert rejected(s, Action("decline", 1), dl) == "timeout"
    assert engine.expire(s, dl - 1) == (s, [])
    out, events = engine.expire(s, dl)
    assert (out.phase, out.winner, out.end) == (engine.MATCH_OVER, 0, "time")
    assert out.main == [120_000, 0] and engine.clocks_at(out, dl + 50_000) == [120_000, 0]
    assert [e["type"] for e in events] == ["timeout", "match_end"]
    assert engine.expire(out, dl + 1) == (out, [])


def test_an_action_1_ms_before_the_deadline_is_in_time() -> None:
    s = act(timed_auction(), "decline", 1, t=129_999)
    assert s.main == [120_000, 1] and s.phase == engine.PLAY


def test_only_the_player_to_act_can_lose_on_time() -> None:
    s = act(timed_auction(), "decline", 1, t=129_000)
    assert s.main[1] == 1000
    # Seat 1's remaining second is long gone, but it is seat 0's turn.
    assert engine.expire(s, 130_000)[1] == []
    s = place(s, 0, (1, 4), t=135_000)
    assert s.to_act == 1 and engine.deadline(s) == 135_000 + 10_000 + 1000


def test_forced_draws_do_not_restart_the_delay() -> None:
    s = drawing_state(CLOCK)  # seat 1's decision started at 1 s
    s = act(s, "draw", 1, t=9000)
    s = act(s, "draw", 1, t=10_500)
    assert engine.deadline(s) == 1000 + 10_000 + 120_000
    s = place(s, 1, (2, 6), (6, 6), "straight_a", t=14_000)
    assert s.main == [120_000, 117_000]


def test_the_clock_is_stopped_while_a_hand_is_over() -> None:
    s = engine.new_match(deal([(1, 4)], [(1, 1)]), jockey=0, clock=CLOCK)
    s = act(s, "decline", 1, t=1000)
    s = place(s, 0, (1, 4), t=13_000)
    assert s.phase == engine.HAND_OVER and s.main == [118_000, 120_000]
    assert engine.deadline(s) is None
    assert engine.clocks_at(s, 10**9) == [118_000, 120_000]
    assert engine.expire(s, 10**9) == (s, [])
    s, _ = engine.next_hand(s, seed_deal(), 500_000)
    assert s.to_act == 1 and engine.deadline(s) == 500_000 + 10_000 + 120_000


def test_main_time_never_goes_below_zero() -> None:
    s = timed_auction()
    assert engine.clocks_at(s, 10**7) == [120_000, 0]


# --- same-device hand-off (reveal) -----------------------------------------


def test_a_handoff_decision_waits_for_reveal_with_the_clock_stopped() -> None:
    s = timed_auction(handoff=True)
    assert s.awaiting_reveal and engine.deadline(s) is None
    assert engine.legal_actions(s) == [Action("reveal", 1)]
    assert engine.forced_action(s) is None
    assert rejected(s, Action("decline", 1), 50_000) == "not_revealed"
    assert rejected(s, Action("reveal", 0), 50_000) == "not_your_turn"
    s = act(s, "reveal", 1, t=50_000)
    assert not s.awaiting_reveal and engine.deadline(s) == 50_000 + 10_000 + 120_000
    assert rejected(s, Action("reveal", 1), 51_000) == "not_awaiting"
    s = act(s, "decline", 1, t=52_000)
    assert s.awaiting_reveal and s.to_act == 0 and s.main == [120_000, 120_000]


def test_a_handoff_draw_needs_no_second_reveal() -> None:
    d = deal([(6, 6), (0, 4)], [(3, 5), (1, 2)], [(0, 1), (2, 6), (0, 3)])
    s = engine.new_match(d, clock=CLOCK, handoff=True)
    s = act(s, "reveal", 0, t=0)
    s = place(s, 0, (6, 6), t=1000)
    s = act(s, "reveal", 1, t=2000)
    s = act(s, "draw", 1, t=3000)
    assert not s.awaiting_reveal and s.to_act == 1
    s = act(s, "draw", 1, t=4000)
    s = place(s, 1, (2, 6), (6, 6), "straight_a", t=5000)
    assert s.awaiting_reveal and s.to_act == 0


def test_reveal_without_handoff_is_rejected() -> None:
    assert rejected(timed_auction(), Action("reveal", 1), 1000) == "not_awaiting"


# --- resign -------------------------------------------------------------------


@pytest.mark.parametrize("who", [0, 1])
def test_either_player_may_resign_in_any_phase(who: int) -> None:
    s0 = timed_auction(handoff=True)
    s1 = act(s0, "reveal", 1, t=100)
    s2 = act(s1, "decline", 1, t=200)
    done = engine.new_match(deal([(1, 4)], [(1, 1)]), jockey=0, clock=None)
    done = place(act(done, "decline", 1), 0, (1, 4))
    for s in (s0, s1, s2, done):
        out = act(s, "resign", who, t=20_000)
        assert (out.phase, out.winner, out.end) == (engine.MATCH_OVER, 1 - who, "resign")
        assert engine.deadline(out) is None and not out.awaiting_reveal


def test_resigning_charges_the_running_decision_and_freezes_the_clocks() -> None:
    s = act(timed_auction(), "resign", 0, t=25_000)
    assert s.main == [120_000, 105_000]
    assert engine.clocks_at(s, 10**8) == [120_000, 105_000]


# --- rejections are stable and change nothing ---------------------------------


def test_it_rejects_a_move_out_of_turn_a_foreign_tile_and_a_bad_player() -> None:
    s = place(opened_by_seat0(seed_deal()), 0, (1, 4))
    assert rejected(s, Action("place", 0, tile=(4, 4), at=((1, 4), "high"))) == "not_your_turn"
    assert rejected(s, Action("place", 1, tile=(4, 4), at=((1, 4), "high"))) == "not_in_hand"
    assert rejected(s, Action("place", 1, tile=None)) == "not_in_hand"
    assert rejected(s, Action("place", 2, tile=(1, 1), at=((1, 4), "low"))) == "bad_request"
    assert rejected(s, Action("fold", 1)) == "bad_request"
    assert rejected(s, Action("bid", 1, amount=15)) == "bad_phase"
    assert rejected(s, Action("place", 1, tile=(1, 1), at=((1, 4), "straight_a"))) == (
        "bad_position"
    )
    assert rejected(s, Action("place", 1, tile=(1, 1), at=((6, 6), "low"))) == "bad_position"


def test_it_rejects_play_in_a_finished_hand_and_next_hand_in_a_running_one() -> None:
    s = opened_by_seat0(deal([(1, 4)], [(1, 1)]))
    with pytest.raises(IllegalAction) as info:
        engine.next_hand(s, seed_deal(), 0)
    assert info.value.code == "bad_phase"
    s = place(s, 0, (1, 4))
    assert rejected(s, Action("place", 1, tile=(1, 1), at=((1, 4), "low"))) == "bad_phase"
    assert rejected(s, Action("reveal", 1)) == "not_awaiting"
    over = act(s, "resign", 1)
    with pytest.raises(IllegalAction) as info:
        engine.next_hand(over, seed_deal(), 0)
    assert info.value.code == "match_over"


def test_apply_never_changes_the_state_it_was_given() -> None:
    s = opened_by_seat0(seed_deal())
    before = engine.to_dict(s)
    s2 = place(s, 0, (1, 4))
    assert engine.to_dict(s) == before and s2 != s


def test_it_refuses_a_broken_deal_and_bad_setup() -> None:
    with pytest.raises(ValueError):
        engine.new_match(deal([(1, 4), (1, 4)], [(0, 0)]))
    with pytest.raises(ValueError):
        engine.new_match(deal([(1, 4), (6, 7)], [(0, 0)]))  # type: ignore[list-item]
    with pytest.raises(ValueError):
        engine.new_match(seed_deal(), balances=(0, 300))
    with pytest.raises(ValueError):
        engine.new_match(seed_deal(), jockey=2)
    with pytest.raises(ValueError):
        Deal.from_order([(0, 0)] * 28)


# --- legal_actions and forced_action agree with apply ------------------------


def random_states(seed: int, clock: ClockConfig | None, handoff: bool) -> Iterator[MatchState]:
    """Every state of one random match (random legal play, time moving forward)."""
    rng = random.Random(seed)
    s = engine.new_match(
        Deal.shuffled(rng), clock=clock, handoff=handoff, jockey=rng.choice([None, 0, 1])
    )
    t = 0
    for _ in range(2000):
        yield s
        if s.phase == engine.MATCH_OVER:
            return
        t += rng.choice([0, 500, 4000, 9000, 15_000, 30_000])
        if s.phase == engine.HAND_OVER:
            s, _ = engine.next_hand(s, Deal.shuffled(rng), t)
            continue
        s, events = engine.expire(s, t)
        if events:
            continue
        s, _ = engine.apply(s, rng.choice(engine.legal_actions(s)), t)


@pytest.mark.parametrize(
    ("seed", "clock", "handoff"),
    [(1, CLOCK, False), (2, None, False), (3, CLOCK, True), (4, None, True), (5, CLOCK, False)],
)
def test_every_legal_action_applies_and_a_forced_one_is_the_only_one(
    seed: int, clock: ClockConfig | None, handoff: bool
) -> None:
    kinds_seen: set[str] = set()
    for s in random_states(seed, clock, handoff):
        legal = engine.legal_actions(s)
        forced = engine.forced_action(s)
        if s.phase in (engine.HAND_OVER, engine.MATCH_OVER):
            assert legal == [] and forced is None
            continue
        assert legal, "a player to act always has something to do"
        assert len(set(legal)) == len(legal)
        if forced is not None:
            assert legal == [forced]
            kinds_seen.add(forced.kind)
        t = s.last_t
        for a in legal:
            assert a.player == s.to_act
            new, events = engine.apply(s, a, t)
            assert events and new.seq > s.seq
        p = s.to_act
        assert p is not None
        foreign = next(x for x in engine.ALL_TILES if x not in s.hands[p])
        if s.awaiting_reveal:
            wrong = "not_revealed"
        else:
            wrong = "bad_phase" if s.phase == engine.AUCTION else "not_in_hand"
        assert rejected(s, Action("place", p, tile=foreign), t) == wrong
        assert rejected(s, Action("pass", 1 - p), t) == "not_your_turn"
    assert kinds_seen, "the random match met no forced action at all"


def test_a_forced_opening_is_forced_and_a_free_opening_is_not() -> None:
    s = engine.new_match(seed_deal(), clock=None)
    assert engine.legal_actions(s) == [Action("place", 0, tile=(6, 6))]
    assert engine.forced_action(s) == Action("place", 0, tile=(6, 6))
    free = opened_by_seat0(seed_deal())
    assert engine.forced_action(free) is None
    assert len(engine.legal_actions(free)) == 7


# --- views: who may see what ------------------------------------------------

TILE_KEYS = {"tile", "hand", "hands", "must_place", "spinner"}
NON_TILE_KEYS = {"balances", "hand_sizes", "main", "pips"}


def tiles_in(view: Any) -> list[tuple[str, int | None, Tile]]:
    """Every tile in a view as (key, hand number, tile), found by walking the JSON.

    A two-int list under any key that is neither a tile key nor a known
    non-tile key fails the walk, so a new field cannot hide a tile from it.
    """
    data = json.loads(json.dumps(view))
    found: list[tuple[str, int | None, Tile]] = []

    def is_pair(x: Any) -> bool:
        return isinstance(x, list) and len(x) == 2 and all(type(v) is int for v in x)

    def take(key: str, hand: int | None, x: Any) -> None:
        if is_pair(x):
            assert 0 <= x[0] <= x[1] <= 6, f"{key}: {x} is not a tile"
            found.append((key, hand, (x[0], x[1])))
        elif isinstance(x, list):
            for y in x:
                take(key, hand, y)
        elif isinstance(x, dict):
            walk(x, hand)
        else:
            assert x is None, f"{key}: unexpected {x!r}"

    def walk(x: Any, hand: int | None, key: str = "") -> None:
        if isinstance(x, dict):
            h = x.get("hand") if isinstance(x.get("hand"), int) else hand
            for k, v in x.items():
                if k in TILE_KEYS and not (k == "hand" and type(v) is int):
                    take(k, h, v)
                else:
                    walk(v, h, k)
        elif isinstance(x, list):
            if is_pair(x):
                assert key in NON_TILE_KEYS, f"unclassified pair {x} under {key!r}"
            for y in x:
                walk(y, hand, key)

    walk(data, data.get("hand_no"))
    return found


def test_the_tile_walk_finds_tiles_everywhere_and_refuses_unknown_pairs() -> None:
    found = tiles_in(
        {"hand_no": 2, "x": [{"tile": [1, 2]}], "events": [{"hand": 1, "hands": [[[0, 0]], []]}]}
    )
    assert found == [("tile", 2, (1, 2)), ("hands", 1, (0, 0))]
    with pytest.raises(AssertionError):
        tiles_in({"hand_no": 0, "secret": [3, 4]})


def test_a_seat_sees_its_own_hand_and_the_layout_but_not_the_opponents_or_the_talon() -> None:
    s = place(opened_by_seat0(seed_deal()), 0, (1, 4))
    for seat in (0, 1):
        view = engine.view_for(s, seat, 0)
        seen = {t for _, _, t in tiles_in(view)}
        assert view["hand"] == [list(t) for t in s.hands[seat]]
        assert seen == set(s.hands[seat]) | {(1, 4)}
    spectator = engine.view_for(s, None, 0)
    assert "hand" not in spectator
    assert {t for _, _, t in tiles_in(spectator)} == {(1, 4)}


def test_a_drawn_tile_appears_only_in_its_drawers_view() -> None:
    s = drawing_state()
    s = act(s, "draw", 1)
    s = act(s, "draw", 1)  # [2|6] fits: seat 1 must place it, and it is to act
    assert s.must_place == (2, 6)
    drawer = engine.view_for(s, 1, 0)
    other = engine.view_for(s, 0, 0)
    spectator = engine.view_for(s, None, 0)
    assert [e["tile"] for e in drawer["events"] if e["type"] == "draw"] == [[0, 1], [2, 6]]
    assert drawer["must_place"] == [2, 6]
    for view in (other, spectator):
        draws = [e for e in view["events"] if e["type"] == "draw"]
        assert len(draws) == 2 and all("tile" not in e for e in draws)
        seen = {t for _, _, t in tiles_in(view)}
        assert seen.isdisjoint({(0, 1), (2, 6), (0, 3), (3, 5), (1, 2)}), seen
    assert other["hand_sizes"] == [1, 4]


def test_hands_are_shown_in_the_settlement_once_a_hand_ends_but_never_the_talon() -> None:
    s = blocked([(0, 4)], [(3, 5), (5, 5)], (150, 150))
    view = engine.view_for(s, 0, 0)
    assert view["settlement"]["hands"] == [[[0, 4]], [[3, 5], [5, 5]]]
    s2 = opened_by_seat0(deal([(1, 4)], [(1, 1), (6, 6)], [(2, 2), (3, 3)]))
    s2 = place(s2, 0, (1, 4))
    for seat in (0, 1, None):
        seen = {t for _, _, t in tiles_in(engine.view_for(s2, seat, 0))}
        assert {(1, 1), (6, 6)} <= seen
        assert seen.isdisjoint({(2, 2), (3, 3)})


def test_a_resign_mid_hand_reveals_nothing() -> None:
    s = act(place(opened_by_seat0(seed_deal()), 0, (1, 4)), "resign", 1)
    seen = {t for _, _, t in tiles_in(engine.view_for(s, 0, 0))}
    assert seen == set(s.hands[0]) | {(1, 4)}


def test_a_view_offers_the_auction_range_only_to_the_player_to_act() -> None:
    s = act(auction(balances=(100, 200)), "bid", 1, amount=15)
    mine = engine.view_for(s, 0, 0)
    theirs = engine.view_for(s, 1, 0)
    assert (mine["min_bid"], mine["max_bid"]) == (20, 115)
    assert mine["auction"]["accept_cost"] == 15 and mine["auction"]["is_jockey"]
    assert theirs["auction"] is None and theirs["max_bid"] is None and not theirs["my_turn"]


def test_a_view_and_a_state_survive_a_json_round_trip() -> None:
    for s in random_states(7, CLOCK, False):
        d = engine.to_dict(s)
        assert engine.to_dict(engine.from_dict(json.loads(json.dumps(d)))) == d
        assert engine.from_dict(d) == s
    with pytest.raises(ValueError):
        engine.from_dict({**engine.to_dict(s), "format": 999})
