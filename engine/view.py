"""What each seat may see (PROTOCOL.md), and the conformance snapshot.

A seat's view holds its own hand and only counts of everything hidden: the
opponent's tiles and the talon never appear, except both hands in a hand's
settlement (RULES §5) and a drawn tile in its drawer's own events.
"""

from __future__ import annotations

from typing import Any

from .match import (
    AUCTION,
    BID_STEP,
    HAND_OVER,
    JOCKEY_DISCOUNT,
    MATCH_OVER,
    PLAY,
    MatchState,
    bid_cost,
    clocks_at,
    deadline,
    forced_action,
    max_bid,
    min_bid,
)


def _ends(s: MatchState) -> list[dict[str, Any]]:
    return [{"tile": [t[0], t[1]], "value": v} for t, v in s.layout.counted_ends()]


def _legal(s: MatchState) -> list[dict[str, Any]]:
    return [
        {"tile": [t[0], t[1]], "side": side, "value": v}
        for t, side, v in s.layout.legal_positions()
    ]


def snapshot(s: MatchState, now_ms: int) -> dict[str, Any]:
    """The conformance snapshot (every key of the conformance README) as of ``now_ms``.

    >>> from .match import ALL_TILES, Deal, apply, forced_action, new_match
    >>> s = new_match(Deal.from_order(list(ALL_TILES)), now_ms=0)
    >>> s, _ = apply(s, forced_action(s), now_ms=12_500)
    >>> snap = snapshot(s, now_ms=12_500)
    >>> snap["ends"], snap["spinner"], snap["clocks"], snap["to_act"]
    ([{'tile': [2, 2], 'value': 4}], [2, 2], [120000, 117500], 0)
    """
    ends = _ends(s)
    return {
        "phase": s.phase,
        "to_act": s.to_act,
        "balances": list(s.balances),
        "hand_sizes": [len(s.hands[0]), len(s.hands[1])],
        "talon": len(s.talon),
        "ends": ends,
        "end_total": sum(e["value"] for e in ends),
        "legal": _legal(s),
        "spinner": None if s.layout.spinner is None else list(s.layout.spinner),
        "jockey": s.jockey,
        "bid": None if s.bid is None else {"player": s.bid[0], "amount": s.bid[1]},
        "clocks": clocks_at(s, now_ms),
        "winner": s.winner,
        "end": s.end,
        "hand_end": s.hand_end,
        "awaiting_reveal": s.awaiting_reveal,
    }


def event_for(ev: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """``ev`` as ``seat`` may see it (``None``: a spectator).

    >>> event_for({"type": "draw", "player": 1, "tile": [2, 5], "fits": True}, 0)
    {'type': 'draw', 'player': 1}
    """
    if ev["type"] == "draw" and ev["player"] != seat:
        # A drawn tile is shown only to its drawer (RULES §5).
        return {k: v for k, v in ev.items() if k not in ("tile", "fits")}
    return ev


def view_for(
    s: MatchState, seat: int | None, now_ms: int, *, since_seq: int | None = None
) -> dict[str, Any]:
    """The whole view of ``seat`` (0 or 1), or a spectator's view with ``seat=None``.

    ``events`` holds the recent events (at most ``LOG_SIZE``); with ``since_seq``,
    only those after it (what a change added, for a client that has the rest).
    """
    v = snapshot(s, now_ms)
    dl = deadline(s)
    running = s.to_act if dl is not None else None
    delay_left = 0
    if running is not None and s.clock is not None and s.decision_start is not None:
        delay_left = max(0, s.decision_start + s.clock.delay_ms - now_ms)
    v["clocks"] = {
        "main": v["clocks"],
        "running": running,
        "delay_left": delay_left,
        "deadline": dl,
        "server_now": now_ms,
        "delay_ms": None if s.clock is None else s.clock.delay_ms,
    }
    v["seat"] = seat
    v["hand_no"] = s.hand_no
    v["layout"] = [
        {
            "tile": [p.tile[0], p.tile[1]],
            "at": None if p.at is None else {"tile": [p.at[0][0], p.at[0][1]], "side": p.at[1]},
            "conn": p.conn,
            "player": p.player,
        }
        for p in s.layout.placed
    ]
    # Shown while a hand's end is on the table (between hands, or at the match's
    # end); during the next hand it is old news and only weighs down every frame.
    v["settlement"] = s.settlement if s.phase in (HAND_OVER, MATCH_OVER) else None
    v["events"] = [event_for(e, seat) for e in s.log if since_seq is None or e["seq"] > since_seq]
    v["handoff"] = s.handoff
    if seat is None:
        return v
    v["hand"] = [[a, b] for a, b in s.hands[seat]]
    my_turn = s.to_act == seat and not s.awaiting_reveal
    v["my_turn"] = my_turn
    forced = forced_action(s) if my_turn else None
    v["forced"] = None if forced is None else forced.kind
    v["playable"] = _playable(s, seat) if my_turn and s.phase == PLAY else []
    # The tile a player drew and must place is its drawer's secret (RULES §5).
    v["must_place"] = None if s.must_place is None or not my_turn else list(s.must_place)
    if s.phase == AUCTION and my_turn:
        top = max_bid(s, seat)
        lo = min_bid(s)
        v["auction"] = {
            "min_bid": lo if top is not None else None,
            "max_bid": top,
            "min_cost": bid_cost(s, seat, lo) if top is not None else None,
            "max_cost": bid_cost(s, seat, top) if top is not None else None,
            "is_jockey": seat == s.jockey,
            "discount": JOCKEY_DISCOUNT if seat == s.jockey else 0,
            "can_decline": s.bid is None,
            "can_accept": s.bid is not None,
            "accept_cost": None if s.bid is None else bid_cost(s, s.bid[0], s.bid[1]),
            # The amounts that may be bid, and what each costs if accepted: the
            # page needs no rules arithmetic of its own.
            "bid_step": BID_STEP,
            "costs": []
            if top is None
            else [
                {"amount": a, "cost": bid_cost(s, seat, a)} for a in range(lo, top + 1, BID_STEP)
            ],
        }
        v["min_bid"] = v["auction"]["min_bid"]
        v["max_bid"] = top
    else:
        v["auction"] = None
        v["min_bid"] = None
        v["max_bid"] = None
    return v


def _playable(s: MatchState, seat: int) -> list[dict[str, Any]]:
    lay = s.layout
    if lay.empty:
        tiles = [s.forced_tile] if s.forced_tile is not None else s.hands[seat]
        return [{"tile": [t[0], t[1]], "at": [None]} for t in tiles if t is not None]
    candidates = [s.must_place] if s.must_place is not None else s.hands[seat]
    legal = lay.legal_positions()
    out = []
    for t in candidates:
        if t is None:
            continue
        at = [
            {"tile": [pt[0], pt[1]], "side": side, "value": val}
            for pt, side, val in legal
            if t[0] == val or t[1] == val
        ]
        if at:
            out.append({"tile": [t[0], t[1]], "at": at})
    return out
