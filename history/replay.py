"""Replays: a match that is over, rebuilt decision by decision from its event log.

The log (``MatchEvent``, in id order) holds every deal (both hands and the
talon order) and every action, forced ones included. The replay runs the real
engine over it: ``engine.new_match``/``engine.next_hand`` on each ``deal`` and
``engine.apply`` on each action, so the layout, both hands and the talon at
every step are the engine's own and not a second implementation of the rules.
The engine runs without a clock (``clock=None``): the times shown are the ones
the log recorded (``used`` and ``main`` of each event), which are the truth;
a clockless engine cannot lose on time, so a timeout is taken from the log.

A ``Step`` is a decision, as a player experiences the match: a bid, an accept,
a decline, a placement or a pass, a resignation, a timeout. The forced draws
of a turn belong to the placement (or the pass) that follows them (RULES §5:
drawing and placing are one turn), and the end of a hand or of the match
belongs to the decision that caused it. Each hand also opens with a step of
its own, the deal, where both hands are shown as dealt.

If the engine refuses an action (a log that does not fit the rules), the
replay stops there and says so (``Replay.broken``) instead of inventing a position.

Who may see a replay is decided in ``history.records.can_replay``: the two
players and staff, once the match is over (a live match's hands are secret).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from django.utils.translation import get_language
from django.utils.translation import gettext as _

import engine
from accounts.display import computer_name
from engine.layout import Layout
from engine.match import START_BALANCE, MatchState
from matches.models import Match, MatchEvent
from matches.ui.text import describe, draw_sentence

Tile = tuple[int, int]

ACTIONS = ("place", "draw", "pass", "bid", "accept", "decline", "resign")
# A decision ends a step; the draws before it are part of it.
DECISIONS = ("place", "pass", "bid", "accept", "decline", "resign")
# Engine events that come out of the decision just applied: they end its step.
FOLLOW_UPS = ("hand_end", "match_end")
# Events that are a step of their own (a deal, a timeout, the platform's end of a match).
OWN_STEPS = ("hand_start", "timeout", "aborted", "voided", "void")


@dataclass(frozen=True)
class PlacedTile:
    tile: Tile
    at: Tile | None
    side: str | None
    player: int


@dataclass(frozen=True)
class Step:
    """The position right after one decision (or a deal), and what happened in it."""

    index: int
    event: dict[str, Any]  # the deciding event (the deal's hand_start, the timeout...)
    kind: str
    player: int | None
    hand_no: int | None
    text: str
    forced: bool
    hands: tuple[tuple[Tile, ...], tuple[Tile, ...]] | None
    talon: tuple[Tile, ...] | None
    table: Layout | None  # the engine's layout (never changed once a later step exists)
    balances: tuple[int, int]
    main: tuple[int, int] | None
    used: int | None
    elapsed_ms: int
    # The tile this step placed, to mark it on the board and in the hands.
    tile: Tile | None = None
    # Tiles drawn from the talon in this turn, before its placement or pass.
    draws: tuple[Tile, ...] = ()
    # Whose they are: the step's player, or the drawer's opponent when it resigned
    # before the drawer decided (the draws are still the drawer's).
    drawer: int | None = None

    @property
    def layout(self) -> tuple[PlacedTile, ...]:
        if self.table is None:
            return ()
        return tuple(
            PlacedTile(p.tile, None if p.at is None else p.at[0], None if p.at is None else p.at[1],
                       p.player)
            for p in self.table.placed
        )  # fmt: skip

    @property
    def ends(self) -> list[tuple[Tile, int]]:
        return [] if self.table is None else self.table.counted_ends()

    @property
    def end_total(self) -> int:
        return sum(v for _t, v in self.ends)


@dataclass
class Replay:
    names: list[str]
    steps: list[Step] = field(default_factory=list)
    broken: str = ""

    @property
    def decisions(self) -> list[Step]:
        """Steps that ended a decision, with the main time it used (RULES §7)."""
        return [s for s in self.steps if s.used is not None]

    @property
    def hands(self) -> list[tuple[int, int]]:
        """``(hand number, index of its first step)`` for every hand, to jump to."""
        firsts: dict[int, int] = {}
        for s in self.steps:
            if s.hand_no is not None:
                firsts.setdefault(s.hand_no, s.index)
        return sorted(firsts.items())


def _tile(x: Sequence[int] | None) -> Tile | None:
    return None if x is None else engine.normalize(x)


def _deal(ev: dict[str, Any]) -> engine.Deal:
    hands = ev["hands"]
    return engine.Deal(
        (
            tuple(engine.normalize(t) for t in hands[0]),
            tuple(engine.normalize(t) for t in hands[1]),
        ),
        tuple(engine.normalize(t) for t in ev["talon"]),
    )


def _action(ev: dict[str, Any]) -> engine.Action:
    kind, player = ev["type"], ev["player"]
    if kind == "place":
        at = ev.get("at")
        return engine.Action(
            "place",
            player,
            tile=_tile(ev["tile"]),
            at=None if at is None else (engine.normalize(at["tile"]), at["side"]),
        )
    if kind == "bid":
        return engine.Action("bid", player, amount=ev["amount"])
    return engine.Action(kind, player)


@dataclass
class _Clocks:
    """What the log says about balances, main time and elapsed time, as it goes."""

    balances: tuple[int, int] = (START_BALANCE, START_BALANCE)
    main: tuple[int, int] | None = None
    t0: int | None = None

    def read(self, ev: dict[str, Any], t: int) -> None:
        if "balances" in ev:
            self.balances = (int(ev["balances"][0]), int(ev["balances"][1]))
        if ev.get("main") is not None:
            self.main = (int(ev["main"][0]), int(ev["main"][1]))
        if self.t0 is None:
            self.t0 = t


def build(match: Match, events: Iterable[MatchEvent] | None = None) -> Replay:
    """Replay ``match`` from its log (``events`` defaults to the stored ones)."""
    if events is None:
        events = MatchEvent.objects.filter(match=match).order_by("id")
    names = match.names()
    if match.computer_seat in (0, 1) and match.computer_level:
        names[match.computer_seat] = computer_name(match.computer_level)  # not computer-1
    replay = Replay(names=names)
    state: MatchState | None = None
    clocks = _Clocks()
    draws: list[dict[str, Any]] = []  # this turn's draws, waiting for its decision
    last_t = 0
    for row in events:
        ev = dict(row.data)
        kind = ev.get("type", row.kind)
        t = int(ev.get("t") or row.at_ms or last_t)
        last_t = max(last_t, t)
        if kind == "started" and clocks.t0 is None:
            clocks.t0 = t
        if replay.broken:
            continue
        try:
            state = _replay_event(state, kind, ev, last_t)
        except (engine.IllegalAction, KeyError, TypeError, ValueError) as e:
            replay.broken = _("The log does not replay past this point (%(error)s).") % {"error": e}
            continue
        if kind == "draw":
            draws.append(ev)
            continue
        if kind not in DECISIONS + FOLLOW_UPS + OWN_STEPS:
            continue
        clocks.read(ev, t)
        if kind in FOLLOW_UPS and replay.steps:
            # The end of a hand or match is part of the decision that caused it: the
            # engine settled it in the same action, so only balances and the text change.
            last = replay.steps[-1]
            replay.steps[-1] = replace(
                last,
                text=f"{last.text} {describe(ev, names)}",
                balances=clocks.balances,
                main=clocks.main,
            )
            continue
        replay.steps.append(_step(len(replay.steps), ev, state, names, clocks, t, draws))
        draws = []
    if draws:
        # Draws that no decision followed (a log that stops mid-turn): a step of their own.
        replay.steps.append(_step(len(replay.steps), draws[-1], state, names, clocks, last_t,
                                  draws[:-1]))  # fmt: skip
    if not replay.steps and match.status == Match.Status.VOIDED:
        # A match voided without a logged event still gets its one step.
        ev = {"type": "voided", "reason": match.void_reason}
        replay.steps.append(_step(0, ev, state, names, clocks, clocks.t0 or 0, []))
    return replay


@lru_cache(maxsize=16)
def _build_once(match_id: int, version: int, created: str, language: str | None) -> Replay:
    match = Match.objects.select_related("player0", "player1").get(pk=match_id)
    return build(match)


def build_cached(match: Match) -> Replay:
    """``build(match)`` for a match that is over, kept for the next step's request.

    Stepping through a replay asks for the same match again and again; the log of
    a match that is over no longer changes. The key holds the match's version
    (bumped by every change), its creation time (an id can come back after a
    rollback) and the language (the step texts are translated).
    """
    if not match.is_over:
        return build(match)
    return _build_once(match.pk, match.version, match.created_at.isoformat(), get_language())


def _replay_event(
    state: MatchState | None, kind: str, ev: dict[str, Any], now: int
) -> MatchState | None:
    """The engine's state after one logged event (unchanged by events that are not the engine's)."""
    if kind == "deal":
        deal = _deal(ev)
        if state is None:
            return engine.new_match(deal, now_ms=now, clock=None)
        state, _events = engine.next_hand(state, deal, now)
        return state
    if kind not in ACTIONS:
        return state
    if state is None:
        raise engine.IllegalAction("bad_phase", "an action before the first deal")
    state, replayed = engine.apply(state, _action(ev), now)
    # The action's own event comes first (a settlement may follow it);
    # its balances must be the logged ones, or the log is not this game.
    mine = replayed[0].get("balances")
    if "balances" in ev and mine != list(ev["balances"]):
        raise ValueError(f"balances {mine} where the log has {ev['balances']}")
    return state


def _step(
    index: int,
    ev: dict[str, Any],
    state: MatchState | None,
    names: list[str],
    clocks: _Clocks,
    t: int,
    draws: list[dict[str, Any]],
) -> Step:
    kind = ev.get("type", "")
    used = ev.get("used")
    drawn = tuple(engine.normalize(d["tile"]) for d in draws if d.get("tile") is not None)
    text = describe(ev, names)
    if drawn:
        text = f"{draw_sentence(draws[0].get('player'), drawn, names)} {text}"
    return Step(
        index=index,
        event=ev,
        kind=kind,
        player=ev.get("player"),
        hand_no=ev.get("hand"),
        text=text,
        forced=bool(ev.get("forced")),
        hands=None if state is None else (tuple(state.hands[0]), tuple(state.hands[1])),
        talon=None if state is None else tuple(state.talon),
        table=None if state is None else state.layout,
        balances=clocks.balances,
        main=clocks.main,
        used=int(used) if used is not None else None,
        elapsed_ms=max(0, t - (clocks.t0 if clocks.t0 is not None else t)),
        tile=_tile(ev.get("tile")) if kind == "place" else None,
        draws=drawn,
        drawer=draws[0].get("player") if drawn else None,
    )
