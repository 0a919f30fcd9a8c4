"""The computer player's decisions at three levels (issue 10).

- 1 入門 (beginner): a random legal action; in the auction it never bids above the minimum.
- 2 中級 (intermediate): the greedy placement of ``greedy.choose``; bids from an
  estimate of what opening this hand is worth with its tiles.
- 3 上級 (advanced): determinized Monte Carlo. Worlds consistent with the view
  and the hand's events (``infer``) are sampled, and each candidate is played
  out in every world to the end of the hand with the level-2 policy; the
  auction compares the playouts with itself and with the opponent opening.
"""

from __future__ import annotations

import random
import time
from typing import Any

from engine.layout import Layout
from engine.tiles import normalize

from . import greedy
from .infer import Belief, belief
from .seat import Event, View, hand_events, plain, seat_view
from .table import ALL_MASK, BIT, HIGH, LOW, PIPS, Option, Table, mask_of, tiles_of

LEVELS = (1, 2, 3)
# Level 3's default budget: playouts per decision (about 22 ms of CPU at the
# median, 70 ms at p99: `make bench`), and a wall-clock cap that stops
# sampling early on a busy machine, with room left under 300 ms for the
# scheduler's stalls. The playout count alone makes a decision reproducible.
PLAYOUTS = 240
TIME_LIMIT_MS = 200

# Level 2's estimate of what opening is worth (points, against the opponent
# opening): a base for having the first move, plus the points its best opening
# tile scores. Level 3's playouts put it nearer 6 + 0.5 x those points (and
# anything from 0 to 25 for one hand), so level 2, like an intermediate
# player, pays 15 for a 10-point opening that is worth a little less.
OPEN_BASE = 6
OPEN_SCORE_WEIGHT = 1.0

Frame = dict[str, Any]


def decide(
    view: Any,
    history: Any = (),
    *,
    level: int,
    rng: random.Random,
    playouts: int = PLAYOUTS,
    time_limit_ms: float | None = TIME_LIMIT_MS,
) -> Frame | None:
    """One legal action for the seat of ``view``, as a match-socket frame body.

    ``view`` is the seat's view as plain JSON (``engine.view_for`` or the
    socket's ``state.view``), ``history`` this hand's events the seat has seen
    (``Memory.events``; the view's own events are added). Anything that is not
    plain JSON data raises ``NotAView``.

    Returns ``{"op": "place", "tile": [a, b], "at": {"tile": [c, d], "side": s}
    or None}``, ``{"op": "bid", "amount": n}``, ``{"op": "accept"}`` or
    ``{"op": "decline"}`` (the caller adds ``version``); or ``None`` when there
    is nothing to decide: not this seat's turn, a hand-off awaiting reveal, or a
    forced action (``view["forced"]``) that the server plays itself.

    ``rng`` is the only randomness. Level 3 plays about ``playouts`` hands per
    decision, fewer if ``time_limit_ms`` of wall time runs out first (``None``:
    no cap, so a seeded decision is reproducible).
    """
    if level not in LEVELS:
        raise ValueError(f"level is one of {LEVELS}")
    v = seat_view(view)
    events = hand_events(v, plain(list(history), "history"))
    return decide_plain(v, events, level, rng, playouts, time_limit_ms)


def decide_plain(
    v: View,
    events: list[Event],
    level: int,
    rng: random.Random,
    playouts: int = PLAYOUTS,
    time_limit_ms: float | None = TIME_LIMIT_MS,
) -> Frame | None:
    """``decide`` for input already made plain (``seat_view``, ``hand_events``)."""
    if not v["my_turn"] or v["forced"] is not None or v.get("awaiting_reveal"):
        return None
    deadline = None if time_limit_ms is None else time.perf_counter() + time_limit_ms / 1000
    if v["phase"] == "auction":
        if level == 1:
            return _random_auction(v, rng)
        if level == 2:
            return _auction(v, _open_value_estimate(v))
        return _auction(v, _open_value_search(v, events, rng, playouts, deadline))
    if v["phase"] != "play":
        return None
    if level == 1:
        return _random_place(v, rng)
    lay, table, options = _options(v)
    if level == 3 and len(options) > 1:
        choice = _search_place(v, events, table, options, rng, playouts, deadline)
    else:
        hand = mask_of(v["hand"])
        choice = greedy.choose(table, _mask(options), _unknown(v, hand), _opp_size(v))
    return _place_frame(lay, *choice)


# --- level 1 ----------------------------------------------------------------


def _random_auction(v: View, rng: random.Random) -> Frame:
    a = v["auction"]
    options: list[Frame] = [{"op": "decline"} if a["can_decline"] else {"op": "accept"}]
    if a["max_bid"] is not None:
        options.append({"op": "bid", "amount": a["min_bid"]})
    return rng.choice(options)


def _random_place(v: View, rng: random.Random) -> Frame:
    options = [(p["tile"], at) for p in v["playable"] for at in p["at"]]
    tile, at = rng.choice(options)
    return {
        "op": "place",
        "tile": tile,
        "at": None if at is None else {"tile": at["tile"], "side": at["side"]},
    }


# --- levels 2 and 3: the auction -------------------------------------------


def _auction(v: View, value: float) -> Frame:
    """Bid the minimum while opening is worth more than the bid costs plus what accepting earns.

    Accepting a standing bid earns what its bidder pays; a raise, if accepted,
    costs this seat its own bid (after the jockey's discount). So raise when
    ``value`` (opening oneself against the opponent opening) beats both, and
    never bid one's whole balance, which would lose the match (RULES §6).
    """
    a = v["auction"]
    balance = v["balances"][v["seat"]]
    earned = a["accept_cost"] or 0
    if a["max_bid"] is not None and a["min_cost"] < balance and value > a["min_cost"] + earned:
        return {"op": "bid", "amount": a["min_bid"]}
    return {"op": "decline"} if a["can_decline"] else {"op": "accept"}


def _open_value_estimate(v: View) -> float:
    """Level 2: a base for the first move, plus the best opening tile's points."""
    best = max((Table.opening(t).score() for t in tiles_of(mask_of(v["hand"]))), default=0)
    return OPEN_BASE + OPEN_SCORE_WEIGHT * best


def _open_value_search(
    v: View, events: list[Event], rng: random.Random, playouts: int, deadline: float | None
) -> float:
    """Level 3: the mean of (this seat opens) minus (the opponent opens) over sampled worlds."""
    me = v["seat"]
    b = belief(v, events)
    hand = mask_of(v["hand"])
    gain = 0.0
    worlds = 0
    while worlds < max(1, playouts // 2):
        hands, talon = _world(me, hand, b, rng)
        for opener, sign in ((me, 1), (1 - me, -1)):
            gain += sign * greedy.playout(Table.new(), hands, talon, v["balances"], opener, 0, me)
        worlds += 1
        if deadline is not None and time.perf_counter() > deadline:
            break
    return gain / worlds


# --- levels 2 and 3: placing ------------------------------------------------


def _options(v: View) -> tuple[Layout, Table, list[Option]]:
    """The layout, its model, and every distinct legal placement (``Table.options``)."""
    lay = Layout()
    for p in v["layout"]:
        at = p["at"]
        lay.place(normalize(p["tile"]), None if at is None else (normalize(at["tile"]), at["side"]))
    table = Table.of(lay)
    if v["must_place"] is not None:
        candidates = mask_of([v["must_place"]])
    else:
        candidates = mask_of([p["tile"] for p in v["playable"]])
    return lay, table, table.options(candidates)


def _mask(options: list[Option]) -> int:
    m = 0
    for _, t in options:
        m |= BIT[t]
    return m


def _unknown(v: View, hand: int) -> int:
    return ALL_MASK & ~hand & ~mask_of([p["tile"] for p in v["layout"]])


def _opp_size(v: View) -> int:
    size: int = v["hand_sizes"][1 - v["seat"]]
    return size


def _place_frame(lay: Layout, i: int | None, t: int) -> Frame:
    tile = [LOW[t], HIGH[t]]
    if i is None:
        return {"op": "place", "tile": tile, "at": None}
    pt, side, _ = lay.open_positions()[i]
    return {"op": "place", "tile": tile, "at": {"tile": [pt[0], pt[1]], "side": side}}


def _world(me: int, hand: int, b: Belief, rng: random.Random) -> tuple[list[int], list[int]]:
    opp_hand, talon = b.sample(rng)
    hands = [0, 0]
    hands[me] = hand
    hands[1 - me] = opp_hand
    return hands, talon


def _search_place(
    v: View,
    events: list[Event],
    table: Table,
    options: list[Option],
    rng: random.Random,
    playouts: int,
    deadline: float | None,
) -> Option:
    """The option with the best mean playout result over the same sampled worlds."""
    me = v["seat"]
    b = belief(v, events)
    hand = mask_of(v["hand"])
    sums = [0.0] * len(options)
    for _ in range(max(1, playouts // len(options))):
        hands, talon = _world(me, hand, b, rng)
        for k, (i, t) in enumerate(options):
            sums[k] += greedy.playout(table, hands, talon, v["balances"], me, 0, me, first=(i, t))
        if deadline is not None and time.perf_counter() > deadline:
            break
    # Ties (equal sums) go to the heavier tile: it costs more if the hand blocks.
    best = max(range(len(options)), key=lambda k: (sums[k], PIPS[options[k][1]]))
    return options[best]
