"""Properties of whole random matches (hypothesis).

Each example plays one match from a seeded shuffle: random legal play, forced
actions applied, random time gaps (some crossing deadlines), hand-off on or
off, any starting jockey and balances, with illegal probes mixed in. After
every step the invariants below must hold.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import Action, ClockConfig, Deal, IllegalAction, MatchState

Tile = tuple[int, int]
ALL = frozenset(engine.ALL_TILES)
SIDES = ("low", "high", "straight_a", "straight_b", "branch_a", "branch_b")
KINDS = ("place", "draw", "pass", "decline", "bid", "accept", "resign", "reveal")

# A hand always ends within this many actions: at most ~62 auction decisions
# (bids rise by 5 and cost at most a balance), 28 placements, 14 draws, a pass
# per placement plus two, and a reveal before each decision.
HAND_BOUND = 400


# --- what a seat may know -------------------------------------------------------

TILE_KEYS = {"tile", "hand", "hands", "must_place", "spinner"}
NON_TILE_KEYS = {"balances", "hand_sizes", "main", "pips"}


def tiles_in(data: Any, hand: int) -> list[tuple[int, Tile]]:
    """Every tile in ``data`` (JSON-like; tuples count as lists), with its hand number.

    ``data`` belongs to hand ``hand`` unless a dict in it (an event, a
    settlement) carries its own ``hand``. A two-int list that is neither under
    a tile key nor under a known non-tile key fails, so a new field cannot
    hide a tile.
    """
    found: list[tuple[int, Tile]] = []

    def take(key: str, h: int, x: Any) -> None:
        if isinstance(x, (list, tuple)):
            if len(x) == 2 and type(x[0]) is int and type(x[1]) is int:
                assert 0 <= x[0] <= x[1] <= 6, f"{key}: {x} is not a tile"
                found.append((h, (x[0], x[1])))
            else:
                for y in x:
                    take(key, h, y)
        elif isinstance(x, dict):
            walk(x, h, key)
        else:
            assert x is None, f"{key}: unexpected {x!r}"

    def walk(x: Any, h: int, key: str) -> None:
        if isinstance(x, dict):
            own = x.get("hand")
            if type(own) is int:
                h = own
            for k, v in x.items():
                if k in TILE_KEYS and not (k == "hand" and type(v) is int):
                    take(k, h, v)
                elif isinstance(v, (dict, list, tuple)):
                    walk(v, h, k)
        elif isinstance(x, (list, tuple)):
            if len(x) == 2 and type(x[0]) is int and type(x[1]) is int:
                assert key in NON_TILE_KEYS, f"unclassified pair {x} under {key!r}"
            for y in x:
                if isinstance(y, (dict, list, tuple)):
                    walk(y, h, key)

    walk(data, hand, "")
    return found


@dataclass
class Knowledge:
    """Per hand number, the tiles each seat (and a spectator, key None) may know."""

    known: dict[tuple[int, int | None], set[Tile]] = field(default_factory=dict)
    # Events never change once logged, and what a seat may know only grows:
    # an event that passed for a seat once passes for good.
    passed: set[tuple[int | None, int]] = field(default_factory=set)

    def update(self, s: MatchState) -> None:
        h = s.hand_no
        public = {p.tile for p in s.layout.placed}
        if s.settlement is not None and s.settlement["hand"] == h:
            # Both hands are shown once a hand is settled; never the talon.
            for held in s.settlement["hands"]:
                public |= {(a, b) for a, b in held}
        for seat in (0, 1, None):
            k = self.known.setdefault((h, seat), set())
            k |= public
            if seat is not None:
                # Its own hand at every moment covers its dealt and drawn tiles.
                k |= set(s.hands[seat])

    def check(self, s: MatchState, now: int) -> None:
        for seat in (0, 1, None):
            full = engine.view_for(s, seat, now)
            if s.seq % 5 == 0:
                # Sampled, for speed: a view is plain JSON data (no tuples, no objects).
                assert json.loads(json.dumps(full)) == full
            view = dict(full)
            events = view.pop("events")
            assert isinstance(events, list)
            found = tiles_in(view, view["hand_no"])
            for ev in events:
                if (seat, ev["seq"]) not in self.passed:
                    found += tiles_in(ev, view["hand_no"])
            for hand, tile in found:
                assert tile in self.known.get((hand, seat), set()), (
                    f"seat {seat} sees {list(tile)} of hand {hand} it may not know "
                    f"(state hand {s.hand_no}, phase {s.phase})"
                )
            self.passed.update((seat, ev["seq"]) for ev in events)
            if seat is None:
                assert "hand" not in view
            else:
                assert view["hand"] == [list(t) for t in s.hands[seat]]
            assert view["seat"] == seat


# --- the invariants -------------------------------------------------------------


def check_state(s: MatchState, now: int, prev: MatchState | None) -> None:
    assert sum(s.balances) == 300 and min(s.balances) >= 0, s.balances
    if s.phase != engine.MATCH_OVER:
        assert min(s.balances) > 0
    elif s.end == "balance":
        assert 0 in s.balances and s.balances[s.winner] == 300  # type: ignore[index]
    # The 28 tiles, each once, in the hands, the talon and the layout.
    tiles = [*s.hands[0], *s.hands[1], *s.talon, *(p.tile for p in s.layout.placed)]
    assert len(tiles) == 28 and set(tiles) == ALL
    # Exact round trips, as data and as JSON text.
    d = engine.to_dict(s)
    assert engine.to_dict(engine.from_dict(d)) == d
    text = json.dumps(d)
    assert json.loads(text) == d, "to_dict holds only JSON types"
    again = engine.from_dict(json.loads(text))
    assert engine.to_dict(again) == d
    assert engine.legal_actions(again) == engine.legal_actions(s)
    assert engine.snapshot(again, now) == engine.snapshot(s, now)
    # The clock: main time never grows, never goes below 0.
    if s.clock is None:
        assert s.main is None and engine.clocks_at(s, now) is None
    else:
        assert s.main is not None and min(s.main) >= 0
        shown = engine.clocks_at(s, now)
        assert shown is not None and min(shown) >= 0
        assert all(a <= b for a, b in zip(shown, s.main, strict=True))
        if prev is not None and prev.main is not None:
            assert all(a <= b for a, b in zip(s.main, prev.main, strict=True))
    snap = engine.snapshot(s, now)
    assert snap["end_total"] == sum(e["value"] for e in snap["ends"])
    if s.phase in (engine.AUCTION, engine.PLAY):
        assert s.to_act in (0, 1) and engine.legal_actions(s)
    else:
        assert s.to_act is None and engine.legal_actions(s) == []
        assert engine.deadline(s) is None


# --- illegal probes ---------------------------------------------------------------


def random_probe(rng: random.Random) -> Action:
    kind = rng.choice((*KINDS, "fold"))
    player = rng.choice((0, 1, 0, 1, 2, -1))
    tile: Tile | None = None
    at: tuple[Tile, str] | None = None
    amount: int | None = None
    if kind == "place":
        tile = rng.choice((*engine.ALL_TILES, None))
        if rng.random() < 0.8:
            at = (rng.choice(engine.ALL_TILES), rng.choice((*SIDES, "up")))
    elif kind == "bid":
        amount = rng.choice((-5, 0, 3, 10, 15, 17, 20, 25, 100, 155, 300, 315, 400))
    return Action(kind, player, tile=tile, at=at, amount=amount)


def fingerprint(s: MatchState, now: int) -> tuple[Any, ...]:
    """Everything observable about ``s``: its stored form and what it offers now."""
    return (
        engine.to_dict(s),
        engine.snapshot(s, now),
        engine.legal_actions(s),
        engine.forced_action(s),
        engine.deadline(s),
    )


def probe(s: MatchState, rng: random.Random, now: int) -> None:
    """Throw a random action at ``s``: a legal one applies, anything else is
    refused with ``IllegalAction``; either way ``s`` stays exactly as it was."""
    action = random_probe(rng)
    legal = engine.legal_actions(s)
    before = fingerprint(s, now)
    allowed = action in legal or (action.kind == "resign" and action.player in (0, 1))
    if allowed and s.phase != engine.MATCH_OVER:
        engine.apply(s, action, now)
        assert fingerprint(s, now) == before
        return
    try:
        engine.apply(s, action, now)
    except IllegalAction as e:
        assert isinstance(e.code, str) and e.code, e
    else:
        raise AssertionError(f"{action} was applied but is not legal: {legal}")
    assert fingerprint(s, now) == before, f"rejected {action} changed the state"
    if legal:
        # Applying a legal action leaves the state it was given untouched too.
        engine.apply(s, rng.choice(legal), now)
        assert fingerprint(s, now) == before
    # A legal action arriving at or after the deadline is refused as late.
    dl = engine.deadline(s)
    if dl is not None and legal:
        with_late = rng.choice(legal)
        try:
            engine.apply(s, with_late, dl + rng.choice((0, 1, 5000)))
        except IllegalAction as e:
            assert e.code == "timeout"
        else:
            raise AssertionError("an action at the deadline was applied")
        assert fingerprint(s, now) == before
    if s.phase != engine.HAND_OVER:
        try:
            engine.next_hand(s, Deal.shuffled(rng), now)
        except IllegalAction:
            pass
        else:
            raise AssertionError("next_hand was accepted while a hand runs")
        assert fingerprint(s, now) == before


# --- one match --------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    seed: int
    balance0: int
    jockey: int | None
    handoff: bool
    clock: ClockConfig | None
    slow_ms: int  # with a clock: every decision takes at least delay + slow_ms (0: any)
    resign_after: int  # hands before someone resigns when the match may not end


def gap(rng: random.Random, clock: ClockConfig | None) -> int:
    if clock is None:
        return rng.choice((0, 1, 1000))
    r = rng.random()
    if r < 0.35:
        return 0
    if r < 0.7:
        return rng.randint(1, max(1, clock.delay_ms))
    if r < 0.95:
        return rng.randint(clock.delay_ms, clock.delay_ms + clock.main_ms // 8)
    return rng.randint(clock.delay_ms, clock.delay_ms + clock.main_ms * 2)  # often too late


DECISION_ENDING = ("place", "pass", "decline", "bid", "accept")


def pips(hand: list[Tile]) -> int:
    return sum(a + b for a, b in hand)


def check_transition(prev: MatchState, action: Action, s: MatchState, after_pass: bool) -> None:
    """What an applied action did to the balances and the turn, by RULES §4–§6,
    worked out here independently of the engine."""
    p, kind = action.player, action.kind
    gained = [s.balances[i] - prev.balances[i] for i in (0, 1)]
    assert gained[0] == -gained[1]
    over = s.phase == engine.MATCH_OVER
    if kind == "place":
        total = engine.snapshot(s, 0)["end_total"]
        owed = total if total > 0 and total % 5 == 0 else 0
        assert gained[p] == min(owed, prev.balances[1 - p])
        if not s.hands[p]:
            assert s.hand_end == "domino" and s.phase in (engine.HAND_OVER, engine.MATCH_OVER)
        elif s.balances[1 - p] == 0:
            assert over and s.hand_end is None
        else:
            assert (s.phase, s.to_act) == (engine.PLAY, 1 - p)
    elif kind == "pass" and after_pass:
        # Both passed in succession: a block, the light side takes the heavy total.
        assert s.hand_end == "block"
        held = [pips(prev.hands[0]), pips(prev.hands[1])]
        if held[0] == held[1]:
            assert gained == [0, 0]
        else:
            light = 0 if held[0] < held[1] else 1
            heavy = held[1 - light]
            owed = heavy - heavy % 5 + (5 if heavy % 5 >= 3 else 0)
            assert gained[light] == min(owed, prev.balances[1 - light])
    elif kind == "accept":
        assert prev.bid is not None
        bidder, amount = prev.bid
        cost = max(0, amount - 15) if bidder == prev.jockey else amount
        assert gained[bidder] == -cost
        assert over or (s.phase, s.to_act) == (engine.PLAY, bidder)
    else:
        assert gained == [0, 0]
        if kind == "pass":
            assert (s.phase, s.to_act) == (engine.PLAY, 1 - p)
        elif kind == "draw":
            assert s.to_act == p and len(s.talon) == len(prev.talon) - 1
            assert sorted(s.hands[p]) == sorted([*prev.hands[p], prev.talon[0]])
        elif kind == "decline":
            assert (s.phase, s.to_act) == (engine.PLAY, prev.jockey)
        elif kind == "bid":
            assert s.bid == (p, action.amount) and s.to_act == 1 - p
    if over:
        assert s.end == "balance" and 0 in s.balances


def play(setup: Setup) -> MatchState:
    rng = random.Random(setup.seed)
    s = engine.new_match(
        Deal.shuffled(rng),
        now_ms=0,
        balances=(setup.balance0, 300 - setup.balance0),
        clock=setup.clock,
        jockey=setup.jockey,
        handoff=setup.handoff,
    )
    t = 0
    knowledge = Knowledge()
    knowledge.update(s)
    check_state(s, t, None)
    knowledge.check(s, t)
    clock = setup.clock
    timed_end = clock is not None and setup.slow_ms > 0
    if clock is not None and timed_end:
        # Every decision charges at least slow_ms (or its player times out), so
        # the match must end by time if nothing else ends it first.
        decisions = 2 * (clock.main_ms // setup.slow_ms + 2)
        bound = decisions * 18 + 10
    else:
        bound = HAND_BOUND * (setup.resign_after + 1)
    steps_in_hand = 0
    last_play = ""  # the latest place or pass in this hand
    for _step in range(bound):
        if s.phase == engine.MATCH_OVER:
            break
        prev = s
        if s.phase == engine.HAND_OVER:
            if s.hand_no + 1 >= setup.resign_after and not timed_end:
                s, _ = engine.apply(s, Action("resign", rng.choice((0, 1))), t)
            else:
                t += gap(rng, clock)
                s, events = engine.next_hand(s, Deal.shuffled(rng), t)
                assert events[0]["type"] == "hand_start"
                steps_in_hand = 0
                last_play = ""
        else:
            forced = engine.forced_action(s)
            if forced is not None and rng.random() < 0.7:
                action = forced  # the live server sends it at once
            else:
                action = rng.choice(engine.legal_actions(s))
                t += gap(rng, clock)
            if (
                clock is not None
                and timed_end
                and action.kind in DECISION_ENDING
                and s.decision_start is not None
            ):
                t = max(t, s.decision_start + clock.delay_ms + setup.slow_ms)
            expired, events = engine.expire(s, t)
            if events:
                assert expired.end == "time" and expired.winner == 1 - s.to_act  # type: ignore[operator]
                s = expired
            else:
                if rng.random() < 0.3:
                    probe(s, rng, t)
                s, events = engine.apply(s, action, t)
                assert events and all(e["t"] == max(t, prev.last_t) for e in events)
                check_transition(prev, action, s, after_pass=last_play == "pass")
                if action.kind in ("place", "pass"):
                    last_play = action.kind
            steps_in_hand += 1
            assert steps_in_hand <= HAND_BOUND, "a hand did not end"
        knowledge.update(s)
        check_state(s, t, prev)
        knowledge.check(s, t)
        if rng.random() < 0.5:
            # Play on from the stored form: nothing the engine needs is lost.
            s = engine.from_dict(json.loads(json.dumps(engine.to_dict(s))))
    assert s.phase == engine.MATCH_OVER, f"the match did not end within {bound} steps"
    assert s.winner in (0, 1) and s.end in ("balance", "time", "resign")
    if s.end == "time":
        assert s.main is not None and s.main[1 - s.winner] == 0
    # Nothing more can happen, and a probe changes nothing.
    assert engine.legal_actions(s) == [] and engine.forced_action(s) is None
    for _ in range(3):
        probe(s, rng, t)
    return s


clocks = st.one_of(
    st.none(),
    st.just(ClockConfig()),
    st.builds(
        ClockConfig,
        main_ms=st.integers(min_value=0, max_value=30_000),
        delay_ms=st.integers(min_value=0, max_value=10_000),
    ),
)

setups = st.builds(
    Setup,
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    balance0=st.one_of(st.just(150), st.integers(min_value=1, max_value=299)),
    jockey=st.sampled_from((None, 0, 1)),
    handoff=st.booleans(),
    clock=clocks,
    slow_ms=st.sampled_from((0, 0, 500, 2000)),
    resign_after=st.integers(min_value=1, max_value=6),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
def test_random_matches_keep_every_invariant_and_end(setup: Setup) -> None:
    play(setup)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    handoff=st.booleans(),
    slow_ms=st.sampled_from((1000, 3000)),
)
def test_a_match_with_the_standard_clock_ends_by_time_or_balance_when_time_moves(
    seed: int, handoff: bool, slow_ms: int
) -> None:
    s = play(Setup(seed, 150, None, handoff, ClockConfig(), slow_ms, resign_after=1))
    assert s.end in ("time", "balance")


def test_the_tile_walk_is_real() -> None:
    view = {
        "hand_no": 3,
        "layout": [{"tile": [1, 4], "at": None}],
        "events": [{"hand": 2, "type": "hand_end", "hands": [[[0, 0]], [[5, 6]]], "pips": [0, 11]}],
    }
    assert tiles_in(view, 3) == [(3, (1, 4)), (2, (0, 0)), (2, (5, 6))]
    for hidden in ({"secret": [2, 3]}, {"extra": {"talon": [[2, 3], [4, 4]]}}):
        try:
            tiles_in({"hand_no": 0, **hidden}, 0)
        except AssertionError:
            continue
        raise AssertionError(f"the walk missed {hidden}")
