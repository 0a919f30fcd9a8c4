"""Every action of a live match through ``act``, with seeded deals and explicit times.

Times are passed in (``received_at``), as the consumer stamps them on arrival,
so every clock value can be asserted exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from matchplay import (
    STEP_MS,
    Table,
    frame_for,
    happened,
    in_phase,
    new_casual,
    play_to,
    random_legal,
)

import engine
from matches.clock.deadlines import check_match
from matches.lobby.invites import create_same_device
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from matches.play.audience import _result, view_for
from matches.play.errors import ServiceError

pytestmark = pytest.mark.django_db

MAIN, DELAY = 120_000, 10_000


@pytest.fixture
def table(alice: Any, bob: Any) -> Table:
    return Table(new_casual(alice, bob), [alice, bob])


def _kinds(match_id: int) -> list[str]:
    return list(MatchEvent.objects.filter(match_id=match_id).values_list("kind", flat=True))


def _event(match_id: int, kind: str) -> dict[str, Any]:
    return MatchEvent.objects.filter(match_id=match_id, kind=kind).latest("id").data


def _auction_table(
    table: Table, settings: Any, also: Callable[[engine.MatchState], bool] | None = None
) -> tuple[int, engine.MatchState]:
    """Play (first legal moves) until the first auction where ``also`` holds; (time, state).

    The deals depend on the match id, which differs from run to run: whatever a
    test needs of the auction must be part of what the seed search looks for.
    """
    in_auction = in_phase(engine.AUCTION)

    def want(b: Any) -> bool:
        if not in_auction(b):
            return False
        if also is not None:
            return also(b.state)
        # The plain auction tests bid up to 30: both must be able to afford it.
        return min(b.state.balances) >= 40

    _, t = play_to(table, want, settings=settings)
    s = table.state
    assert s is not None and s.bid is None and s.jockey is not None
    assert s.to_act == 1 - s.jockey
    return t, s


# --- starting ----------------------------------------------------------------


def test_the_first_start_press_only_marks_that_seat_ready(table: Table) -> None:
    t = timing.now_ms()
    out = table.op(1, "start", t)
    assert out.error is None
    m = table.match
    assert m.status == Match.Status.WAITING and m.state is None
    assert m.ready == [False, True]
    assert m.version == 1


def test_the_second_start_press_deals_and_plays_the_forced_opening_at_once(
    table: Table, settings: Any
) -> None:
    settings.DEAL_SEED = 7
    t = timing.now_ms()
    table.op(0, "start", t)
    table.op(1, "start", t + 500)
    m = table.match
    s = table.state
    assert m.status == Match.Status.LIVE and s is not None
    assert m.ready_deadline_ms is None
    # Exactly one tile on the table: the forced opening, played for its holder.
    assert len(s.layout.placed) == 1
    opening = s.layout.placed[0]
    place = _event(m.pk, "place")
    assert place["forced"] is True and place["tile"] == list(opening.tile)
    deal = _event(m.pk, "deal")
    dealt = [tuple(x) for h in deal["hands"] for x in h]
    doubles = [x for x in dealt if x[0] == x[1]]
    assert opening.tile == (max(doubles) if doubles else max(dealt, key=lambda x: (sum(x), x[1])))
    # The opener's opponent now decides, its clock starting at the second press.
    assert s.to_act == 1 - opening.player
    assert s.decision_start == t + 500
    assert s.main == [MAIN, MAIN]
    assert engine.deadline(s) == t + 500 + DELAY + MAIN


def test_a_match_nobody_starts_within_its_window_is_aborted_without_result(
    table: Table,
) -> None:
    m = table.match  # an invite's match: 10 minutes (matches/lobby/invite_wait.py)
    assert m.ready_deadline_ms is not None
    created = m.ready_deadline_ms - 600_000
    assert abs(created - timing.now_ms()) < 5_000
    table.op(0, "start", created + 1_000)
    # The backstop before the window closes does nothing...
    assert check_match(m.pk, table.version, now=m.ready_deadline_ms - 1) is False
    # ...and at its end aborts: no winner, no result.
    assert check_match(m.pk, table.version, now=m.ready_deadline_ms) is True
    m = table.refresh()
    assert m.status == Match.Status.ABORTED
    assert m.winner_seat is None and m.state is None
    assert _result(m) == {
        "winner": None,
        "end": "abort",
        "rated": False,
        "unrated_reason": "aborted",
    }
    assert _kinds(m.pk)[-1] == "aborted"


def test_a_start_press_after_the_window_aborts_the_match(table: Table) -> None:
    deadline = table.match.ready_deadline_ms
    assert deadline is not None
    out = table.op(1, "start", deadline)
    assert out.error is not None and out.error.code == "aborted"
    assert table.match.status == Match.Status.ABORTED


def test_leaving_before_the_start_aborts_the_match(table: Table) -> None:
    out = table.op(0, "resign", timing.now_ms())
    assert out.error is None
    assert table.match.status == Match.Status.ABORTED
    assert table.match.winner_seat is None


# --- placing and the clock -----------------------------------------------------


def _started(table: Table, settings: Any, seed: int = 11) -> tuple[int, engine.MatchState]:
    settings.DEAL_SEED = seed
    t = timing.now_ms()
    table.start(t)
    s = table.state
    assert s is not None and s.phase == engine.PLAY and s.to_act is not None
    return t, s


def test_a_placement_is_timed_at_its_receipt_and_charges_main_time_after_the_delay(
    table: Table, settings: Any
) -> None:
    t, s = _started(table, settings)
    p = s.to_act
    assert p is not None
    action = engine.legal_actions(s)[0]
    assert action.kind == "place"
    table.do(action, t + DELAY + 2_345)
    after = table.state
    assert after is not None
    assert after.main is not None
    assert after.main[p] == MAIN - 2_345
    assert after.main[1 - p] == MAIN
    assert action.tile in [pl.tile for pl in after.layout.placed]
    assert action.tile not in after.hands[p]
    # The next decision starts at the receipt time of this one.
    if after.to_act == 1 - p:
        assert after.decision_start == t + DELAY + 2_345
    place = _event(table.match_id, "place")
    assert place["t"] == t + DELAY + 2_345 and place["used"] == 2_345


def test_deciding_within_the_delay_costs_no_main_time(table: Table, settings: Any) -> None:
    t, s = _started(table, settings)
    table.do(engine.legal_actions(s)[0], t + DELAY - 1)
    after = table.state
    assert after is not None and after.main == [MAIN, MAIN]


def test_the_server_clock_keeps_counting_between_a_players_decisions(
    table: Table, settings: Any
) -> None:
    t, s = _started(table, settings)
    p = s.to_act
    assert p is not None
    view = view_for(table.match, s, f"seat{p}", t + DELAY + 30_000)
    assert view["clocks"]["main"][p] == MAIN - 30_000
    assert view["clocks"]["running"] == p
    assert view["clocks"]["deadline"] == t + DELAY + MAIN
    assert view["clocks"]["server_now"] == t + DELAY + 30_000


def test_a_placement_arriving_exactly_at_the_deadline_loses_on_time(
    table: Table, settings: Any
) -> None:
    t, s = _started(table, settings)
    p = s.to_act
    assert p is not None
    deadline = engine.deadline(s)
    assert deadline is not None
    places = _kinds(table.match_id).count("place")
    out = table.send(p, frame_for(engine.legal_actions(s)[0], table.version), deadline)
    assert out.error is not None and out.error.code == "timeout"
    m = table.match
    assert m.status == Match.Status.FINISHED
    assert m.end_reason == "time" and m.winner_seat == 1 - p
    assert _kinds(m.pk).count("place") == places  # the late move was not applied
    assert _kinds(m.pk)[-2:] == ["timeout", "match_end"]


def test_a_placement_one_millisecond_before_the_deadline_counts(
    table: Table, settings: Any
) -> None:
    t, s = _started(table, settings)
    deadline = engine.deadline(s)
    assert deadline is not None and s.to_act is not None
    table.do(engine.legal_actions(s)[0], deadline - 1)
    after = table.state
    assert after is not None and after.main is not None
    assert after.main[s.to_act] == 1
    assert table.match.status == Match.Status.LIVE


def test_at_one_device_the_forced_opening_needs_no_hand_off(alice: Any, settings: Any) -> None:
    # The opener would otherwise be asked to show a hand it has no choice with.
    settings.DEAL_SEED = 7
    m = create_same_device(alice, "Hanako")
    act(m.pk, alice, {"op": "start", "version": 0}, timing.now_ms())
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    assert len(s.layout.placed) == 1  # played at once
    opener = s.layout.placed[0].player
    assert s.awaiting_reveal and s.to_act == 1 - opener  # the next player's hand-off
    reveal = _event(m.pk, "reveal")
    assert reveal["forced"] is True and reveal["player"] == opener


def test_forced_draws_are_played_by_the_server_at_once(table: Table, settings: Any) -> None:
    play_to(table, happened("draw"), settings=settings)
    draws = [e for e in table.events if e["type"] == "draw"]
    assert draws and all(e["forced"] is True for e in draws)
    s = table.state
    assert s is not None
    last = draws[-1]
    tile = tuple(last["tile"])
    drawer = last["player"]
    # The drawn tile is now in the drawer's hand or already on the table.
    assert tile in s.hands[drawer] or tile in [p.tile for p in s.layout.placed]


def test_a_blocked_hand_ends_after_two_forced_passes(table: Table, settings: Any) -> None:
    play_to(table, happened("hand_end", how="block"), random_legal, settings=settings)
    events = table.events
    passes = [e for e in events if e["type"] == "pass"]
    assert len(passes) >= 2 and all(e["forced"] is True for e in passes)
    end = [e for e in events if e["type"] == "hand_end"][-1]
    assert end["how"] == "block"
    s = table.state
    assert s is not None
    assert s.phase in (engine.HAND_OVER, engine.MATCH_OVER)
    assert s.settlement is not None and s.settlement["how"] == "block"


# --- the auction and the opening after a domino ---------------------------------


def test_after_a_domino_the_non_jockey_may_decline_and_the_jockey_opens(
    table: Table, settings: Any
) -> None:
    t, s = _auction_table(table, settings)
    jockey = s.jockey
    assert jockey is not None
    table.op(1 - jockey, "decline", t + 3_000)
    after = table.state
    assert after is not None
    assert after.phase == engine.PLAY and after.to_act == jockey
    assert after.decision_start == t + 3_000  # a new decision with its own delay
    assert after.balances == s.balances
    # The jockey opens with any tile it likes: not the forced one, no position.
    tile = max(after.hands[jockey])
    table.op(jockey, "place", t + 4_000, tile=list(tile), at=None)
    opened = table.state
    assert opened is not None
    assert [p.tile for p in opened.layout.placed] == [tile]


def test_a_bid_passes_the_turn_and_a_raise_passes_it_back(table: Table, settings: Any) -> None:
    t, s = _auction_table(table, settings)
    jockey = s.jockey
    assert jockey is not None
    table.op(1 - jockey, "bid", t, amount=15)
    s1 = table.state
    assert s1 is not None and s1.bid == (1 - jockey, 15) and s1.to_act == jockey
    table.op(jockey, "bid", t + 1_000, amount=25)
    s2 = table.state
    assert s2 is not None and s2.bid == (jockey, 25) and s2.to_act == 1 - jockey
    assert s2.decision_start == t + 1_000
    assert s2.balances == s.balances  # nothing is paid until a bid is accepted


def test_an_accepted_jockey_bid_costs_it_15_less(table: Table, settings: Any) -> None:
    t, s = _auction_table(table, settings)
    jockey = s.jockey
    assert jockey is not None
    table.op(1 - jockey, "bid", t, amount=15)
    table.op(jockey, "bid", t + 1_000, amount=20)
    table.op(1 - jockey, "accept", t + 2_000)
    after = table.state
    assert after is not None
    assert after.balances[jockey] == s.balances[jockey] - 5
    assert after.balances[1 - jockey] == s.balances[1 - jockey] + 5
    assert after.phase == engine.PLAY and after.to_act == jockey
    accept = _event(table.match_id, "accept")
    assert accept["cost"] == 5 and accept["payer"] == jockey


def test_an_accepted_bid_of_the_non_jockey_costs_it_in_full_and_it_opens(
    table: Table, settings: Any
) -> None:
    t, s = _auction_table(table, settings)
    jockey = s.jockey
    assert jockey is not None
    bidder = 1 - jockey
    table.op(bidder, "bid", t, amount=30)
    table.op(jockey, "accept", t + 1_000)
    after = table.state
    assert after is not None
    assert after.balances[bidder] == s.balances[bidder] - 30
    assert after.to_act == bidder and after.layout.empty
    tile = min(after.hands[bidder])
    table.op(bidder, "place", t + 2_000, tile=list(tile))
    opened = table.state
    assert opened is not None and [p.tile for p in opened.layout.placed] == [tile]


def _jockey_can_raise_to_the_others_whole_balance(s: engine.MatchState) -> bool:
    assert s.jockey is not None
    poor = 1 - s.jockey
    high = s.balances[poor]
    return high >= 20 and engine.bid_cost(s, s.jockey, high) <= s.balances[s.jockey]


def test_a_player_who_cannot_raise_accepts_at_once(table: Table, settings: Any) -> None:
    t, s = _auction_table(table, settings, _jockey_can_raise_to_the_others_whole_balance)
    jockey = s.jockey
    assert jockey is not None
    poor = 1 - jockey
    # A raise by the jockey to the other's whole balance leaves it no raise.
    high = s.balances[poor]
    assert engine.bid_cost(s, jockey, high) <= s.balances[jockey]
    table.op(poor, "bid", t, amount=15)
    table.op(jockey, "bid", t + 1_000, amount=high)
    after = table.state
    assert after is not None
    accept = _event(table.match_id, "accept")
    assert accept["forced"] is True and accept["player"] == poor
    assert accept["cost"] == high - 15
    assert after.phase == engine.PLAY and after.to_act == jockey
    assert after.balances[jockey] == s.balances[jockey] - (high - 15)


def _poor_non_jockey_at_an_auction(b: Any) -> bool:
    return any(e["type"] == "decline" and e.get("forced") for e in b.events)


def test_a_player_who_cannot_afford_the_minimum_bid_declines_at_once(
    table: Table, settings: Any
) -> None:
    play_to(table, _poor_non_jockey_at_an_auction, random_legal, settings=settings)
    decline = [e for e in table.events if e["type"] == "decline"][-1]
    assert decline["forced"] is True
    assert decline["balances"][decline["player"]] < 15
    s = table.state
    assert s is not None
    assert s.phase == engine.PLAY and s.to_act == s.jockey and s.layout.empty


# --- resigning, flags, sync -----------------------------------------------------------


def test_a_player_may_resign_at_any_time_and_loses(table: Table, settings: Any) -> None:
    t, s = _started(table, settings)
    waiting = 1 - (s.to_act or 0)
    out = table.op(waiting, "resign", t + 2_000)  # not even its turn
    assert out.error is None
    m = table.match
    assert m.status == Match.Status.FINISHED
    assert m.winner_seat == 1 - waiting and m.end_reason == "resign"


def test_a_flag_before_the_deadline_changes_nothing(table: Table, settings: Any) -> None:
    t, s = _started(table, settings)
    deadline = engine.deadline(s)
    assert deadline is not None
    before = (table.version, table.match.state, MatchEvent.objects.count())
    out = table.op(0, "flag", deadline - 1)
    assert out.error is None
    table.refresh()
    assert (table.version, table.match.state, MatchEvent.objects.count()) == before


def test_a_flag_at_the_deadline_ends_the_match_on_time(table: Table, settings: Any) -> None:
    t, s = _started(table, settings)
    loser = s.to_act
    deadline = engine.deadline(s)
    assert deadline is not None and loser is not None
    table.op(1 - loser, "flag", deadline)
    m = table.match
    assert m.status == Match.Status.FINISHED
    assert m.end_reason == "time" and m.winner_seat == 1 - loser
    after = table.state
    assert after is not None and after.main is not None and after.main[loser] == 0


def test_sync_needs_no_version_and_changes_nothing(table: Table, settings: Any) -> None:
    _started(table, settings)
    before = (table.version, table.match.state, MatchEvent.objects.count())
    out = table.send(1, {"op": "sync"}, timing.now_ms())
    assert out.error is None and out.match.version == before[0]
    table.refresh()
    assert (table.version, table.match.state, MatchEvent.objects.count()) == before


# --- same device: the reveal ------------------------------------------------------------


@pytest.fixture
def device(alice: Any) -> Table:
    return Table(create_same_device(alice, "Hanako"), [alice, alice])


def test_one_start_press_starts_a_same_device_match(device: Table, settings: Any) -> None:
    settings.DEAL_SEED = 3
    out = device.op(0, "start", timing.now_ms())
    assert out.error is None and device.match.status == Match.Status.LIVE


def test_a_same_device_decision_waits_for_reveal_and_its_clock_starts_then(
    device: Table, settings: Any
) -> None:
    settings.DEAL_SEED = 3
    t = timing.now_ms()
    device.start(t)
    # The forced opening needed nobody's hand: it is on the table already.
    s = device.state
    assert s is not None and len(s.layout.placed) == 1 and s.awaiting_reveal
    assert s.decision_start is None and engine.deadline(s) is None  # no clock runs
    # Anything but reveal is refused while the next hand is hidden.
    move = next(a for a in engine.legal_actions(s.copy()) if a.kind == "reveal")
    assert move.player == s.to_act
    out_err = None
    try:
        device.op(0, "place", t + 1_000, tile=[0, 0])
    except ServiceError as e:
        out_err = e.code
    assert out_err == "not_revealed"
    # The reveal starts the clock (from the reveal, not from the deal).
    device.op(0, "reveal", t + 60_000)
    after = device.state
    assert after is not None and not after.awaiting_reveal
    assert after.decision_start == t + 60_000
    assert after.main == [MAIN, MAIN]
    reveal = _event(device.match_id, "reveal")
    assert reveal["t"] == t + 60_000 and "forced" not in reveal


def test_a_same_device_view_shows_no_hand_until_the_reveal(device: Table, settings: Any) -> None:
    settings.DEAL_SEED = 3
    t = timing.now_ms()
    device.start(t)  # the forced opening is played; the next player must reveal
    s = device.state
    assert s is not None and s.awaiting_reveal
    hidden = view_for(device.match, s, "device", t + 2_000)
    assert "hand" not in hidden and hidden["match"]["you"] is None
    device.op(0, "reveal", t + 3_000)
    s = device.state
    assert s is not None
    shown = view_for(device.match, s, "device", t + 4_000)
    assert shown["hand"] == [list(x) for x in s.hands[s.to_act or 0]]
    assert shown["match"]["you"] == s.to_act


def test_a_same_device_status_says_whose_turn_by_name(device: Table, settings: Any) -> None:
    """Two people share one screen: the line above the board names the one to act
    ("Hanako's turn"), never "Your turn", which would say it to neither."""
    from django.utils import translation

    from matches.ui.context import build

    settings.DEAL_SEED = 3
    t = timing.now_ms()
    device.start(t)
    device.op(0, "reveal", t + 3_000)
    s = device.state
    assert s is not None and s.to_act is not None
    view = view_for(device.match, s, "device", t + 4_000)
    name = view["match"]["names"][s.to_act]
    for language, words in (("en", f"{name}'s turn"), ("ja", f"{name}の番です")):
        with translation.override(language):
            status = build(view)["status_text"]
        assert status.startswith(words) and "Your" not in status and "あなた" not in status


def test_a_whole_same_device_match_plays_through_reveals(device: Table, settings: Any) -> None:
    play_to(device, in_phase(engine.MATCH_OVER), random_legal, settings=settings, same_device=True)
    assert device.match.status == Match.Status.FINISHED
    assert "reveal" in _kinds(device.match_id)


# --- between hands -------------------------------------------------------------------------


def _hand_over(table: Table, settings: Any) -> int:
    _, t = play_to(table, in_phase(engine.HAND_OVER), settings=settings)
    m = table.match
    assert m.ready == [False, False]
    assert m.ready_deadline_ms == t - STEP_MS + 30_000
    return t - STEP_MS  # when the hand ended


def test_the_next_hand_starts_when_both_press_continue(table: Table, settings: Any) -> None:
    ended = _hand_over(table, settings)
    s = table.state
    assert s is not None
    main_before = list(s.main or [])
    hand = s.hand_no
    table.op(0, "continue", ended + 20_000)
    assert table.state is not None and table.state.phase == engine.HAND_OVER
    assert table.match.ready == [True, False]
    table.op(1, "continue", ended + 25_000)
    after = table.state
    assert after is not None and after.hand_no == hand + 1
    assert after.phase in (engine.AUCTION, engine.PLAY)
    # The clock was stopped between hands: no main time used, a fresh decision now.
    assert after.main == main_before
    assert after.decision_start == ended + 25_000
    assert table.match.ready == [False, False] and table.match.ready_deadline_ms is None


def test_after_the_30_s_window_a_flag_starts_the_next_hand(table: Table, settings: Any) -> None:
    ended = _hand_over(table, settings)
    hand = table.state.hand_no if table.state else -1
    table.op(0, "continue", ended + 1_000)
    table.op(0, "flag", ended + 29_999)
    assert table.state is not None and table.state.hand_no == hand
    table.op(0, "flag", ended + 30_000)
    after = table.state
    assert after is not None and after.hand_no == hand + 1
    assert after.decision_start == ended + 30_000


def test_after_the_30_s_window_the_backstop_starts_the_next_hand(
    table: Table, settings: Any
) -> None:
    ended = _hand_over(table, settings)
    hand = table.state.hand_no if table.state else -1
    assert check_match(table.match_id, table.version, now=ended + 29_999) is False
    assert check_match(table.match_id, table.version, now=ended + 30_000) is True
    table.refresh()
    after = table.state
    assert after is not None and after.hand_no == hand + 1


def test_continue_while_the_hand_is_played_is_refused(table: Table, settings: Any) -> None:
    t, _ = _started(table, settings)
    with pytest.raises(ServiceError) as e:
        table.op(0, "continue", t + 1_000)
    assert e.value.code == "bad_phase"


def test_a_seeded_match_played_to_its_end_matches_the_rules_step_by_step(
    table: Table, settings: Any
) -> None:
    # play_to compares the database with the pure engine after every step.
    play_to(table, in_phase(engine.MATCH_OVER), random_legal, settings=settings)
    m = table.match
    assert m.status == Match.Status.FINISHED and m.end_reason == "balance"
    s = table.state
    assert s is not None and sorted(s.balances) == [0, 300]
    assert m.winner_seat == s.winner == s.balances.index(300)


def test_a_start_or_continue_racing_the_change_it_asks_for_is_no_error(
    table: Table, settings: Any
) -> None:
    # Both press 開始 at once: the second press finds the match live already.
    t, _ = _started(table, settings)
    version = table.version
    out = table.op(0, "start", t + 500)
    assert out.error is None and table.version == version  # nothing happened, nothing refused
    # A 次へ sent before the next hand started (at an older version) is ignored too.
    out = act(table.match_id, table.users[0], {"op": "continue", "version": version - 1},
                       t + 600)  # fmt: skip
    assert out.error is None and table.version == version
