"""A match of Spectacular Bid: hands, auction, scoring, clock (RULES §1–§7).

The engine is a pure function of its inputs: ``apply(state, action, now_ms)``
returns a *new* state and the events the action caused, or raises
``IllegalAction`` and leaves ``state`` untouched. Time is always passed in as
integer milliseconds; randomness only enters through the ``Deal`` a caller
builds (see ``Deal.shuffled``).

>>> deal = Deal.from_order(list(ALL_TILES))  # [6|6] lies in the talon: it never opens
>>> state = new_match(deal, now_ms=0)
>>> state.phase, state.to_act, forced_action(state)
('play', 1, Action(kind='place', player=1, tile=(2, 2), at=None, amount=None))
>>> state, events = apply(state, forced_action(state), now_ms=1500)
>>> state.to_act, state.balances, events[0]["type"]
(0, [150, 150], 'place')
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

try:
    import orjson
except ImportError:  # the engine needs only the standard library
    orjson = None  # type: ignore[assignment]

from .errors import IllegalAction
from .layout import Layout, Position
from .tiles import ALL_TILES, Tile, hand_pips, opening_rank

START_BALANCE = 150
TOTAL_POINTS = 300
MIN_BID = 15
BID_STEP = 5
SCORE_STEP = 5  # an end total that is a positive multiple of this scores (RULES §4)
JOCKEY_DISCOUNT = 15
HAND_SIZE = 7
LOG_SIZE = 16
_NOT_LOGGED = frozenset({"main", "balances", "used", "hands"})

AUCTION, PLAY, HAND_OVER, MATCH_OVER = "auction", "play", "hand_over", "match_over"
DOMINO, BLOCK = "domino", "block"
END_BALANCE, END_TIME, END_RESIGN = "balance", "time", "resign"

PLAYER_ACTIONS = ("place", "draw", "pass", "decline", "bid", "accept", "resign", "reveal")

Event = dict[str, Any]
_TILE_SET = frozenset(ALL_TILES)


@dataclass(frozen=True, slots=True)
class ClockConfig:
    """Main time per player for the whole match and the delay of every decision (RULES §7)."""

    main_ms: int = 120_000
    delay_ms: int = 10_000


@dataclass(frozen=True, slots=True)
class Deal:
    """One hand's deal: seven tiles each (fewer in hand-made tests), the talon in draw order."""

    hands: tuple[tuple[Tile, ...], tuple[Tile, ...]]
    talon: tuple[Tile, ...]

    @classmethod
    def from_order(cls, order: list[Tile] | tuple[Tile, ...]) -> Deal:
        """Deal a shuffled order of all 28 tiles: 7 to seat 0, 7 to seat 1, the rest is talon."""
        if sorted(order) != list(ALL_TILES):
            raise ValueError("a deal uses each of the 28 tiles once")
        o = tuple(order)
        return cls((o[:HAND_SIZE], o[HAND_SIZE : 2 * HAND_SIZE]), o[2 * HAND_SIZE :])

    @classmethod
    def shuffled(cls, rng: random.Random) -> Deal:
        """Shuffle all 28 tiles with ``rng`` (the platform passes ``secrets.SystemRandom()``)."""
        order = list(ALL_TILES)
        rng.shuffle(order)
        return cls.from_order(order)

    def validate(self) -> None:
        """Raise ``ValueError`` unless every tile is a domino and appears at most once."""
        seen: set[Tile] = set()
        for group in (*self.hands, self.talon):
            for t in group:
                if t not in _TILE_SET or t in seen:
                    raise ValueError(f"invalid or duplicate tile {list(t)}")
                seen.add(t)


@dataclass(frozen=True, slots=True)
class Action:
    """A player's decision. ``kind`` is one of ``PLAYER_ACTIONS``.

    ``tile``/``at`` go with ``place`` (``at`` is ``None`` for the opening tile),
    ``amount`` with ``bid`` (the total, not the increment).
    """

    kind: str
    player: int
    tile: Tile | None = None
    at: Position | None = None
    amount: int | None = None


class MatchState:
    """Everything about a match at one moment. Treat as immutable: ``apply`` copies."""

    __slots__ = (
        "balances",
        "clock",
        "main",
        "decision_start",
        "handoff",
        "awaiting_reveal",
        "hand_no",
        "phase",
        "to_act",
        "hands",
        "talon",
        "layout",
        "jockey",
        "next_jockey",
        "bid",
        "forced_tile",
        "must_place",
        "passes",
        "winner",
        "end",
        "hand_end",
        "last_t",
        "settlement",
        "_log",
        "_log_json",
        "seq",
    )

    balances: list[int]
    clock: ClockConfig | None
    main: list[int] | None
    decision_start: int | None
    handoff: bool
    awaiting_reveal: bool
    hand_no: int
    phase: str
    to_act: int | None
    hands: list[list[Tile]]
    talon: list[Tile]
    layout: Layout
    jockey: int | None
    next_jockey: int | None
    bid: tuple[int, int] | None
    forced_tile: Tile | None
    must_place: Tile | None
    passes: int
    winner: int | None
    end: str | None
    hand_end: str | None
    last_t: int
    settlement: dict[str, Any] | None
    # The recent events in two forms, each made only when needed: as dicts (for
    # views) and as JSON text (for storage, which writes the state on every
    # move). A state loaded from storage has only the text until a view asks;
    # a state made in memory gets its text at its first ``to_dict``. At least
    # one of the two is always there; both hold the same events.
    _log: list[Event] | None
    _log_json: list[str] | None
    seq: int

    @property
    def log(self) -> list[Event]:
        """The recent events (at most ``LOG_SIZE``), oldest first. Do not mutate."""
        if self._log is None:
            assert self._log_json is not None
            # One parse of them all: a view decodes the whole log of a state just loaded.
            self._log = _decode_events(self._log_json)
        return self._log

    @log.setter
    def log(self, events: list[Event]) -> None:
        self._log = list(events)
        self._log_json = None

    def log_json(self) -> list[str]:
        """The recent events as JSON texts (made once, then kept)."""
        if self._log_json is None:
            assert self._log is not None
            self._log_json = [_encode_event(e) for e in self._log]
        return self._log_json

    def copy(self) -> MatchState:
        # Spelled out rather than looped over __slots__: apply copies on every action.
        # Lists are copied; tuples, the settlement and logged events are never mutated.
        new = MatchState.__new__(MatchState)
        new.balances = list(self.balances)
        new.clock = self.clock
        new.main = None if self.main is None else list(self.main)
        new.decision_start = self.decision_start
        new.handoff = self.handoff
        new.awaiting_reveal = self.awaiting_reveal
        new.hand_no = self.hand_no
        new.phase = self.phase
        new.to_act = self.to_act
        new.hands = [list(self.hands[0]), list(self.hands[1])]
        new.talon = list(self.talon)
        new.layout = self.layout.copy()
        new.jockey = self.jockey
        new.next_jockey = self.next_jockey
        new.bid = self.bid
        new.forced_tile = self.forced_tile
        new.must_place = self.must_place
        new.passes = self.passes
        new.winner = self.winner
        new.end = self.end
        new.hand_end = self.hand_end
        new.last_t = self.last_t
        new.settlement = self.settlement
        new._log = None if self._log is None else list(self._log)
        new._log_json = None if self._log_json is None else list(self._log_json)
        new.seq = self.seq
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatchState):
            return NotImplemented
        from .serialize import to_dict

        return to_dict(self) == to_dict(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<MatchState hand={self.hand_no} phase={self.phase} to_act={self.to_act} "
            f"balances={self.balances}>"
        )


# --- construction -----------------------------------------------------------


def new_match(
    deal: Deal,
    *,
    now_ms: int = 0,
    balances: tuple[int, int] | list[int] = (START_BALANCE, START_BALANCE),
    clock: ClockConfig | None = ClockConfig(),
    jockey: int | None = None,
    handoff: bool = False,
) -> MatchState:
    """Start a match and its first hand at ``now_ms``.

    ``jockey=None`` gives a forced opening (RULES §2); 0 or 1 starts with an
    auction in which that player is the jockey (as if it had just gone out).
    """
    if len(balances) != 2 or any(type(b) is not int or b <= 0 for b in balances):
        raise ValueError("balances are two positive integers")
    if jockey not in (None, 0, 1):
        raise ValueError("jockey is 0, 1 or None")
    if clock is not None and (clock.main_ms < 0 or clock.delay_ms < 0):
        raise ValueError("clock times are not negative")
    deal.validate()
    s = MatchState.__new__(MatchState)
    s.balances = list(balances)
    s.clock = clock
    s.main = None if clock is None else [clock.main_ms, clock.main_ms]
    s.decision_start = None
    s.handoff = bool(handoff)
    s.awaiting_reveal = False
    s.hand_no = -1
    s.phase = HAND_OVER
    s.to_act = None
    s.hands = [[], []]
    s.talon = []
    s.layout = Layout()
    s.jockey = None
    s.next_jockey = jockey
    s.bid = None
    s.forced_tile = None
    s.must_place = None
    s.passes = 0
    s.winner = None
    s.end = None
    s.hand_end = None
    s.last_t = now_ms
    s.settlement = None
    s._log = []
    s._log_json = None
    s.seq = 0
    _deal_hand(s, deal, now_ms, [])
    return s


def next_hand(state: MatchState, deal: Deal, now_ms: int) -> tuple[MatchState, list[Event]]:
    """Deal the next hand once the previous one is settled; the clock resumes at ``now_ms``."""
    if state.phase == MATCH_OVER:
        raise IllegalAction("match_over", "the match is over")
    if state.phase != HAND_OVER:
        raise IllegalAction("bad_phase", "the hand is still being played")
    deal.validate()
    s = state.copy()
    events: list[Event] = []
    _deal_hand(s, deal, max(now_ms, s.last_t), events)
    return s, events


def _deal_hand(s: MatchState, deal: Deal, now: int, events: list[Event]) -> None:
    s.hand_no += 1
    s.last_t = now
    s.hands = [list(deal.hands[0]), list(deal.hands[1])]
    s.talon = list(deal.talon)
    s.layout = Layout()
    s.jockey = s.next_jockey
    s.next_jockey = None
    s.bid = None
    s.must_place = None
    s.passes = 0
    s.hand_end = None
    s.settlement = None
    if s.jockey is None:
        dealt = [(opening_rank(t), t, p) for p in (0, 1) for t in s.hands[p]]
        _, tile, holder = max(dealt)
        s.forced_tile = tile
        s.phase = PLAY
        s.to_act = holder
    else:
        s.forced_tile = None
        s.phase = AUCTION
        s.to_act = 1 - s.jockey
    _emit(
        s,
        events,
        now,
        "hand_start",
        None,
        jockey=s.jockey,
        opening="forced" if s.jockey is None else "auction",
        hand_sizes=[len(s.hands[0]), len(s.hands[1])],
    )
    _start_decision(s, now)


# --- time -------------------------------------------------------------------


def deadline(state: MatchState) -> int | None:
    """When the running decision is lost on time, or ``None`` if no clock runs.

    An action must *arrive before* this instant; at it or later loses (RULES §7).
    """
    if state.clock is None or state.decision_start is None or state.to_act is None:
        return None
    assert state.main is not None
    return state.decision_start + state.clock.delay_ms + state.main[state.to_act]


def clocks_at(state: MatchState, now_ms: int) -> list[int] | None:
    """Main time left for each seat as of ``now_ms`` (the running decision charged so far)."""
    if state.main is None:
        return None
    out = list(state.main)
    if state.decision_start is not None and state.to_act is not None and state.clock:
        used = now_ms - state.decision_start - state.clock.delay_ms
        if used > 0:
            out[state.to_act] = max(0, out[state.to_act] - used)
    return out


def expire(state: MatchState, now_ms: int) -> tuple[MatchState, list[Event]]:
    """End the match on time if the player to act has reached its deadline at ``now_ms``.

    Returns ``state`` itself and no events when nothing happens. Idempotent.
    """
    dl = deadline(state)
    if dl is None or now_ms < dl:
        return state, []
    s = state.copy()
    loser = s.to_act
    assert loser is not None and s.main is not None
    s.main[loser] = 0
    s.decision_start = None
    events: list[Event] = []
    _emit(s, events, now_ms, "timeout", loser)
    _finish(s, events, now_ms, 1 - loser, END_TIME)
    return s, events


def credit(state: MatchState, start_ms: int, end_ms: int) -> tuple[MatchState, int]:
    """Give back the part of ``[start_ms, end_ms)`` that the running decision was charged.

    For a service outage (RULES §8: the player to act must not pay for time in
    which no frame could reach the server): the decision's start moves later by
    the overlap of the outage with the decision, so its delay and main time
    stand as they stood when the outage began. Returns the new state and the
    milliseconds credited (``state`` itself and 0 when no decision ran then).

    >>> from .match import ALL_TILES, Deal, apply, forced_action, new_match
    >>> s = new_match(Deal.from_order(list(ALL_TILES)), now_ms=0)
    >>> s, _ = apply(s, forced_action(s), now_ms=1_000)
    >>> deadline(s)
    131000
    >>> s2, ms = credit(s, 5_000, 35_000)
    >>> ms, deadline(s2), clocks_at(s2, 40_000) == clocks_at(s, 10_000)
    (30000, 161000, True)
    """
    dl = deadline(state)
    if dl is None or end_ms <= start_ms:
        return state, 0
    assert state.decision_start is not None
    credited = end_ms - max(start_ms, state.decision_start)
    if credited <= 0:
        return state, 0
    s = state.copy()
    s.decision_start = state.decision_start + credited
    return s, credited


def _start_decision(s: MatchState, now: int) -> None:
    """A genuinely new decision starts: a fresh delay, or a wait for the reveal."""
    if s.handoff:
        s.awaiting_reveal = True
        s.decision_start = None
    elif s.clock is not None:
        s.decision_start = now


def _end_decision(s: MatchState, now: int) -> int:
    """Charge the player to act for the decision that ends now; return main time used."""
    used = 0
    if s.clock is not None and s.decision_start is not None and s.to_act is not None:
        assert s.main is not None
        used = max(0, now - s.decision_start - s.clock.delay_ms)
        used = min(used, s.main[s.to_act])
        s.main[s.to_act] -= used
    s.decision_start = None
    s.awaiting_reveal = False
    return used


# --- actions ----------------------------------------------------------------


def apply(state: MatchState, action: Action, now_ms: int) -> tuple[MatchState, list[Event]]:
    """Apply a player's ``action`` arriving at ``now_ms``.

    Returns the new state and the events caused, or raises ``IllegalAction``
    with ``state`` unchanged. Call ``expire`` first: an action at or past the
    deadline is rejected here with ``timeout``.
    """
    kind, p = action.kind, action.player
    if p not in (0, 1):
        raise IllegalAction("bad_request", "player is 0 or 1")
    if state.phase == MATCH_OVER:
        raise IllegalAction("match_over", "the match is over")
    now = max(now_ms, state.last_t)
    dl = deadline(state)
    if dl is not None and now >= dl:
        raise IllegalAction("timeout", "the deadline has passed")
    if kind == "resign":
        s = state.copy()
        events: list[Event] = []
        _end_decision(s, now)
        _emit(s, events, now, "resign", p)
        _finish(s, events, now, 1 - p, END_RESIGN)
        return s, events
    if kind not in PLAYER_ACTIONS:
        raise IllegalAction("bad_request", f"unknown action {kind!r}")
    if state.phase == HAND_OVER:
        if kind == "reveal":
            raise IllegalAction("not_awaiting", "nothing awaits a reveal")
        raise IllegalAction("bad_phase", "the hand is over")
    if p != state.to_act:
        raise IllegalAction("not_your_turn", "it is not your turn")
    if kind == "reveal":
        if not state.awaiting_reveal:
            raise IllegalAction("not_awaiting", "nothing awaits a reveal")
        s = state.copy()
        events = []
        s.awaiting_reveal = False
        if s.clock is not None:
            s.decision_start = now
        s.last_t = now
        _emit(s, events, now, "reveal", p)
        return s, events
    if state.awaiting_reveal:
        raise IllegalAction("not_revealed", "show your hand first")
    if state.phase == AUCTION:
        return _auction(state, action, now)
    return _play(state, action, now)


def _auction(state: MatchState, action: Action, now: int) -> tuple[MatchState, list[Event]]:
    kind, p = action.kind, action.player
    bid = state.bid
    events: list[Event] = []
    if kind == "decline":
        if bid is not None:
            raise IllegalAction("bid_standing", "a bid stands: accept or raise")
        s = state.copy()
        used = _end_decision(s, now)
        _emit(s, events, now, "decline", p, used=used)
        s.phase = PLAY
        s.to_act = s.jockey
        _start_decision(s, now)
        return s, events
    if kind == "bid":
        amount = action.amount
        if type(amount) is not int or amount <= 0 or amount % BID_STEP:
            raise IllegalAction("bad_amount", "bids are multiples of 5")
        lo = min_bid(state)
        if amount < lo:
            raise IllegalAction("bad_amount", f"the minimum bid is {lo}")
        if bid_cost(state, p, amount) > state.balances[p]:
            raise IllegalAction("unaffordable", "you cannot afford that bid")
        s = state.copy()
        used = _end_decision(s, now)
        s.bid = (p, amount)
        _emit(s, events, now, "bid", p, amount=amount, used=used)
        s.to_act = 1 - p
        _start_decision(s, now)
        return s, events
    if kind == "accept":
        if bid is None:
            raise IllegalAction("no_bid", "there is no bid to accept")
        s = state.copy()
        used = _end_decision(s, now)
        bidder, amount = bid
        cost = bid_cost(state, bidder, amount)
        s.balances[bidder] -= cost
        s.balances[1 - bidder] += cost
        s.bid = None
        _emit(s, events, now, "accept", p, amount=amount, payer=bidder, cost=cost, used=used)
        if s.balances[bidder] <= 0:
            _finish(s, events, now, 1 - bidder, END_BALANCE)
            return s, events
        s.phase = PLAY
        s.to_act = bidder
        _start_decision(s, now)
        return s, events
    raise IllegalAction("bad_phase", "the auction is running")


def _play(state: MatchState, action: Action, now: int) -> tuple[MatchState, list[Event]]:
    kind, p = action.kind, action.player
    lay = state.layout
    hand = state.hands[p]
    if kind in ("decline", "bid", "accept"):
        raise IllegalAction("bad_phase", "there is no auction now")
    if kind == "place":
        return _place(state, action, now)
    if lay.empty:
        raise IllegalAction("must_place", "place an opening tile")
    if state.must_place is not None:
        raise IllegalAction("must_place", "place the tile you drew")
    if lay.any_fit(hand):
        raise IllegalAction("must_place", "a tile in your hand fits")
    events: list[Event] = []
    if kind == "draw":
        if not state.talon:
            raise IllegalAction("talon_empty", "the talon is empty")
        s = state.copy()
        tile = s.talon.pop(0)
        s.hands[p].append(tile)
        fits = bool(s.layout.fits(tile))
        if fits:
            s.must_place = tile
        s.last_t = now
        _emit(s, events, now, "draw", p, tile=list(tile), fits=fits)
        return s, events
    # kind == "pass"
    if state.talon:
        raise IllegalAction("must_draw", "draw from the talon")
    s = state.copy()
    used = _end_decision(s, now)
    s.passes += 1
    _emit(s, events, now, "pass", p, used=used)
    if s.passes >= 2:
        _settle_block(s, events, now)
    else:
        s.to_act = 1 - p
        _start_decision(s, now)
    return s, events


def _place(state: MatchState, action: Action, now: int) -> tuple[MatchState, list[Event]]:
    p, tile, at = action.player, action.tile, action.at
    if tile is None or tile not in state.hands[p]:
        raise IllegalAction("not_in_hand", "that tile is not in your hand")
    lay = state.layout
    if lay.empty:
        if at is not None:
            raise IllegalAction("bad_position", "the opening tile is not attached")
        if state.forced_tile is not None and tile != state.forced_tile:
            raise IllegalAction("forced_opening", "you must open with the forced tile")
    else:
        if at is None:
            raise IllegalAction("bad_position", "say where the tile goes")
        value = lay.value_at(at[0], at[1])
        if value is None:
            raise IllegalAction("bad_position", "that position is not open")
        if tile[0] != value and tile[1] != value:
            raise IllegalAction("no_match", "the tile does not match that end")
        if state.must_place is not None and tile != state.must_place:
            raise IllegalAction("must_place", "place the tile you drew")
    s = state.copy()
    used = _end_decision(s, now)
    s.hands[p].remove(tile)
    s.layout.place(tile, at, p)
    s.must_place = None
    s.passes = 0
    ends = s.layout.counted_ends()
    total = sum(v for _, v in ends)
    score = points_for(total)
    moved = _transfer(s, 1 - p, p, score)
    events: list[Event] = []
    _emit(
        s,
        events,
        now,
        "place",
        p,
        tile=list(tile),
        at=None if at is None else {"tile": list(at[0]), "side": at[1]},
        ends=[{"tile": list(t), "value": v} for t, v in ends],
        total=total,
        score=moved,
        used=used,
    )
    if not s.hands[p]:
        s.hand_end = DOMINO
        s.next_jockey = p
        _settle(s, events, now, DOMINO, receiver=None, owed=0, moved=0, went_out=p)
        if s.balances[1 - p] <= 0:
            _finish(s, events, now, p, END_BALANCE)
    elif s.balances[1 - p] <= 0:
        _finish(s, events, now, p, END_BALANCE)
    else:
        s.to_act = 1 - p
        _start_decision(s, now)
    return s, events


def round_to_five(n: int) -> int:
    """Nearest multiple of 5, remainder 0–2 down and 3–4 up (RULES §5).

    >>> [round_to_five(n) for n in (17, 18, 2, 3)]
    [15, 20, 0, 5]
    """
    r = n % 5
    return n - r if r <= 2 else n + 5 - r


def _settle_block(s: MatchState, events: list[Event], now: int) -> None:
    pips = [hand_pips(s.hands[0]), hand_pips(s.hands[1])]
    s.hand_end = BLOCK
    s.next_jockey = None
    if pips[0] == pips[1]:
        _settle(s, events, now, BLOCK, receiver=None, owed=0, moved=0, went_out=None)
        return
    receiver = 0 if pips[0] < pips[1] else 1
    owed = round_to_five(pips[1 - receiver])
    moved = _transfer(s, 1 - receiver, receiver, owed)
    _settle(s, events, now, BLOCK, receiver=receiver, owed=owed, moved=moved, went_out=None)
    if s.balances[1 - receiver] <= 0:
        _finish(s, events, now, receiver, END_BALANCE)


def _settle(
    s: MatchState,
    events: list[Event],
    now: int,
    how: str,
    *,
    receiver: int | None,
    owed: int,
    moved: int,
    went_out: int | None,
) -> None:
    s.phase = HAND_OVER
    s.to_act = None
    s.decision_start = None
    s.awaiting_reveal = False
    s.settlement = {
        "hand": s.hand_no,
        "how": how,
        "hands": [[list(t) for t in s.hands[0]], [list(t) for t in s.hands[1]]],
        "pips": [hand_pips(s.hands[0]), hand_pips(s.hands[1])],
        "receiver": receiver,
        "owed": owed,
        "moved": moved,
        "went_out": went_out,
        "next_jockey": s.next_jockey,
        "balances": list(s.balances),
    }
    _emit(s, events, now, "hand_end", None, **s.settlement)


def _transfer(s: MatchState, payer: int, receiver: int, amount: int) -> int:
    """Move up to ``amount`` points, capped at the payer's balance (RULES §1)."""
    moved = min(amount, s.balances[payer])
    s.balances[payer] -= moved
    s.balances[receiver] += moved
    return moved


def _finish(s: MatchState, events: list[Event], now: int, winner: int, how: str) -> None:
    s.phase = MATCH_OVER
    s.to_act = None
    s.decision_start = None
    s.awaiting_reveal = False
    s.bid = None
    s.winner = winner
    s.end = how
    s.last_t = max(s.last_t, now)
    _emit(s, events, now, "match_end", None, winner=winner, how=how)


def _emit(
    s: MatchState, events: list[Event], now: int, kind: str, player: int | None, **data: Any
) -> None:
    s.seq += 1
    s.last_t = max(s.last_t, now)
    ev: Event = {"seq": s.seq, "type": kind, "player": player, "t": now, "hand": s.hand_no}
    ev.update(data)
    if s.main is not None:
        ev["main"] = list(s.main)
    ev["balances"] = list(s.balances)
    events.append(ev)
    # The state keeps a slim copy for the views' recent events: it is stored on
    # every move, so what only replays need (clocks, balances, both hands at a
    # settlement — all in the returned events and the state itself) stays out.
    slim = {k: v for k, v in ev.items() if k not in _NOT_LOGGED}
    if s._log is not None:
        s._log.append(slim)
        if len(s._log) > LOG_SIZE:
            del s._log[: len(s._log) - LOG_SIZE]
    if s._log_json is not None:
        s._log_json.append(_encode_event(slim))
        if len(s._log_json) > LOG_SIZE:
            del s._log_json[: len(s._log_json) - LOG_SIZE]


def _encode_event(ev: Event) -> str:
    return json.dumps(ev, separators=(",", ":"))


def _decode_events(texts: list[str]) -> list[Event]:
    """The events of ``log_json``, parsed as one JSON array (with orjson where installed:
    a view of every pushed change decodes the whole log, 4 % of a web process's CPU)."""
    joined = "[" + ",".join(texts) + "]"
    events: list[Event] = json.loads(joined) if orjson is None else orjson.loads(joined)
    return events


# --- what may be done now --------------------------------------------------


def points_for(total: int) -> int:
    """The points an end total scores before the payer's balance caps them (RULES §4).

    >>> [points_for(t) for t in (0, 5, 12, 15)]
    [0, 5, 0, 15]
    """
    return total if total > 0 and total % SCORE_STEP == 0 else 0


def bid_cost(state: MatchState, player: int, amount: int) -> int:
    """What ``player`` pays if its bid of ``amount`` is accepted (the jockey's discount applied)."""
    if player == state.jockey:
        return max(0, amount - JOCKEY_DISCOUNT)
    return amount


def min_bid(state: MatchState) -> int:
    """The lowest amount that may be bid now: 15 to open, the standing bid + 5 to raise."""
    return MIN_BID if state.bid is None else state.bid[1] + BID_STEP


def max_bid(state: MatchState, player: int) -> int | None:
    """The highest amount ``player`` can afford, or ``None`` if not even the minimum."""
    lo = min_bid(state)
    bal = state.balances[player]
    top = bal + (JOCKEY_DISCOUNT if player == state.jockey else 0)
    top -= top % BID_STEP
    return top if top >= lo and bid_cost(state, player, lo) <= bal else None


def legal_actions(state: MatchState) -> list[Action]:
    """Every action the player to act may take now, ``resign`` (always allowed) excepted."""
    p = state.to_act
    if p is None or state.phase not in (AUCTION, PLAY):
        return []
    if state.awaiting_reveal:
        return [Action("reveal", p)]
    if state.phase == AUCTION:
        out: list[Action] = []
        if state.bid is None:
            out.append(Action("decline", p))
        else:
            out.append(Action("accept", p))
        top = max_bid(state, p)
        if top is not None:
            out.extend(Action("bid", p, amount=a) for a in range(min_bid(state), top + 1, 5))
        return out
    lay = state.layout
    if lay.empty:
        tiles = [state.forced_tile] if state.forced_tile is not None else state.hands[p]
        return [Action("place", p, tile=t) for t in tiles if t is not None]
    candidates = [state.must_place] if state.must_place is not None else state.hands[p]
    legal = lay.open_positions()
    out = []
    for t in candidates:
        if t is None:
            continue
        for pt, side, v in legal:
            if t[0] == v or t[1] == v:
                out.append(Action("place", p, tile=t, at=(pt, side)))
    if out:
        return out
    return [Action("draw", p)] if state.talon else [Action("pass", p)]


def forced_action(state: MatchState) -> Action | None:
    """The action the rules force on the player to act, if it has no choice.

    These are the forced opening, draws, passes and the decline or accept of a
    player who cannot afford the minimum bid (RULES §2, §5, §6). The live server
    applies them at once. ``None`` while a same-device decision awaits ``reveal``.
    """
    p = state.to_act
    if p is None or state.awaiting_reveal or state.phase not in (AUCTION, PLAY):
        return None
    if state.phase == AUCTION:
        if max_bid(state, p) is not None:
            return None
        return Action("decline", p) if state.bid is None else Action("accept", p)
    lay = state.layout
    if lay.empty:
        if state.forced_tile is not None:
            return Action("place", p, tile=state.forced_tile)
        return None
    if state.must_place is not None or lay.any_fit(state.hands[p]):
        return None
    return Action("draw", p) if state.talon else Action("pass", p)
