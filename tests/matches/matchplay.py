"""Scripted play for the match tests: seeded deals, a simulator, and a table that acts.

Deals are seeded (``DEAL_SEED``): hand ``h`` of match ``id`` comes from
``random.Random(f"{seed}:{id}:{h}")``. A match's id is only known once it exists,
so a test creates the match through the real services first, then searches seeds
*for that id* with :func:`find_seed`, which plays the match in the pure engine
(the :class:`Sim`, which does what ``act`` does: forced follow-ups at
once, the next hand when both pressed continue) with a seeded policy until the
wanted situation occurs. The same policy with the same seed then drives the real
services (:class:`Table`) to the very same position, and :func:`drive` can check
that the database holds exactly the simulated state after every step.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import engine
from matches.conf import match_clock
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.act import Outcome, act, forced_step
from tests.support import frame_for as frame_for  # the PROTOCOL.md frame for an action
from tests.support import live_casual as live_casual  # a casual match, both Starts pressed

STEP_MS = 1000  # between two decisions: well inside the 10 s delay, so no main time is used

Policy = Callable[[engine.MatchState, random.Random], engine.Action]
ENGINE_EVENT_KINDS = frozenset(
    {
        "hand_start",
        "place",
        "draw",
        "pass",
        "decline",
        "bid",
        "accept",
        "resign",
        "reveal",
        "hand_end",
        "match_end",
        "timeout",
    }
)


def deal_for(seed: int, match_id: int, hand_no: int) -> engine.Deal:
    """The deal ``services`` makes for this hand when ``DEAL_SEED == seed``."""
    return engine.Deal.shuffled(random.Random(f"{seed}:{match_id}:{hand_no}"))


# --- policies --------------------------------------------------------------


def first_legal(state: engine.MatchState, rng: random.Random) -> engine.Action:
    """The first legal action: declines auctions, places the first fitting tile."""
    return engine.legal_actions(state)[0]


def random_legal(state: engine.MatchState, rng: random.Random) -> engine.Action:
    """Any legal action, uniformly (so auctions often see big bids)."""
    return rng.choice(engine.legal_actions(state))


def cautious_random(state: engine.MatchState, rng: random.Random) -> engine.Action:
    """Random placements; in auctions mostly decline/accept, sometimes a small bid."""
    acts = engine.legal_actions(state)
    if state.phase == engine.AUCTION and rng.random() < 0.7:
        return acts[0]  # decline or accept
    if state.phase == engine.AUCTION:
        return acts[min(1, len(acts) - 1)]
    return rng.choice(acts)


# --- the two backends: the pure engine and the real services ----------------


class Backend(Protocol):
    state: engine.MatchState | None
    events: list[dict[str, Any]]

    def do(self, action: engine.Action, t: int) -> None: ...

    def cont(self, seat: int, t: int) -> None: ...


class Sim:
    """What the services do to a live match, in the pure engine."""

    def __init__(self, seed: int, match_id: int, t: int, *, same_device: bool = False) -> None:
        self.seed, self.match_id, self.same_device = seed, match_id, same_device
        self.events: list[dict[str, Any]] = []
        self.ready = [False, False]
        state = engine.new_match(
            deal_for(seed, match_id, 0),
            now_ms=t,
            clock=match_clock(),
            handoff=same_device,
        )
        self.events.extend(e for e in state.log)
        self.state: engine.MatchState | None = self._forced(state, t)

    def _forced(self, state: engine.MatchState, t: int) -> engine.MatchState:
        while (a := forced_step(state)) is not None:
            state, ev = engine.apply(state, a, t)
            for e in ev:
                e["forced"] = True  # as the services mark them (in the state's log too)
            self.events.extend(ev)
        return state

    def do(self, action: engine.Action, t: int) -> None:
        assert self.state is not None
        state, ev = engine.apply(self.state, action, t)
        self.events.extend(ev)
        self.state = self._forced(state, t)

    def cont(self, seat: int, t: int) -> None:
        assert self.state is not None and self.state.phase == engine.HAND_OVER
        for s in (0, 1) if self.same_device else (seat,):
            self.ready[s] = True
        if all(self.ready):
            self.ready = [False, False]
            state, ev = engine.next_hand(
                self.state, deal_for(self.seed, self.match_id, self.state.hand_no + 1), t
            )
            self.events.extend(ev)
            self.state = self._forced(state, t)


class Table:
    """A live match driven through ``act`` with explicit receipt times."""

    def __init__(self, match: Match, users: Iterable[Any]) -> None:
        self.match_id = match.pk
        self.users = list(users)  # by seat; a same-device match has alice twice
        self.refresh()

    def refresh(self) -> Match:
        self.match = Match.objects.select_related("player0", "player1").get(pk=self.match_id)
        return self.match

    @property
    def state(self) -> engine.MatchState | None:  # type: ignore[override]
        m = self.match
        return None if m.state is None else engine.from_dict(m.state)

    @property
    def version(self) -> int:
        return self.match.version

    @property
    def events(self) -> list[dict[str, Any]]:
        return [
            e.data
            for e in MatchEvent.objects.filter(match_id=self.match_id).order_by("id")
            if e.kind in ENGINE_EVENT_KINDS
        ]

    def send(self, seat: int, frame: Any, t: int) -> Outcome:
        try:
            return act(self.match_id, self.users[seat], frame, t)
        finally:
            self.refresh()

    def op(self, seat: int, op: str, t: int, **extra: Any) -> Outcome:
        return self.send(seat, {"op": op, "version": self.version, **extra}, t)

    def do(self, action: engine.Action, t: int) -> None:
        out = self.send(action.player, frame_for(action, self.version), t)
        assert out.error is None, out.error.code

    def cont(self, seat: int, t: int) -> None:
        out = self.op(seat, "continue", t)
        assert out.error is None, out.error.code

    def start(self, t: int) -> None:
        """Both press start (a same-device device presses once for both)."""
        self.op(0, "start", t)
        if self.match.status == Match.Status.WAITING:
            self.op(1, "start", t)
        assert self.match.status == Match.Status.LIVE, self.match.status


def drive(
    backend: Backend,
    policy: Policy,
    rng: random.Random,
    t: int,
    *,
    until: Callable[[Backend], bool] = lambda b: False,
    max_steps: int = 5000,
    mirror: Sim | None = None,
) -> int:
    """Play ``backend`` with ``policy`` until ``until`` holds or the match ends; return the time.

    With ``mirror`` (a Sim of the same match), the backend's state is compared
    with the simulated one after every step: the services did exactly what the
    rules say, forced actions included.
    """
    for _ in range(max_steps):
        s = backend.state
        if until(backend) or s is None or s.phase == engine.MATCH_OVER:
            return t
        if s.phase == engine.HAND_OVER:
            for seat in (0, 1):
                if backend.state is not None and backend.state.phase == engine.HAND_OVER:
                    backend.cont(seat, t)
                    if mirror is not None:
                        mirror.cont(seat, t)
                    t += STEP_MS
        else:
            action = policy(s, rng)
            backend.do(action, t)
            if mirror is not None:
                mirror.do(action, t)
            t += STEP_MS
        if mirror is not None:
            assert_same(backend.state, mirror.state)
    raise AssertionError("the match did not end")


def assert_same(a: engine.MatchState | None, b: engine.MatchState | None) -> None:
    """Two states are equal (a readable diff of their stored form if not)."""
    da = None if a is None else engine.to_dict(a)
    db = None if b is None else engine.to_dict(b)
    if da != db and da is not None and db is not None:
        diff = {k: (da[k], db.get(k)) for k in da if da[k] != db.get(k)}
        raise AssertionError(f"database and rules differ: {diff}")
    assert da == db


def find_seed(
    match_id: int,
    want: Callable[[Backend], bool],
    policy: Policy = first_legal,
    *,
    t: int = 0,
    same_device: bool = False,
    tries: int = 5000,
) -> int:
    """A DEAL_SEED (also the policy's seed) under which ``want`` happens in this match."""
    for seed in range(1, tries + 1):
        sim = Sim(seed, match_id, t, same_device=same_device)
        drive(sim, policy, random.Random(seed), t + STEP_MS, until=want)
        if want(sim):
            return seed
    raise AssertionError(f"no seed in 1..{tries} gives the wanted situation")


def play_to(
    table: Table,
    want: Callable[[Backend], bool],
    policy: Policy = first_legal,
    *,
    settings: Any,
    same_device: bool = False,
) -> tuple[int, int]:
    """Seed the table's match so that ``want`` happens, start it and play until it does.

    Returns ``(seed, t)``: the seed used and the time of the next decision.
    The database is compared with the simulation after every step. ``settings``
    is pytest-django's fixture (the seed is undone after the test).
    """
    t0 = timing.now_ms()
    seed = find_seed(table.match_id, want, policy, t=t0, same_device=same_device)
    settings.DEAL_SEED = seed
    table.start(t0)
    sim = Sim(seed, table.match_id, t0, same_device=same_device)
    assert_same(table.state, sim.state)
    t = drive(table, policy, random.Random(seed), t0 + STEP_MS, until=want, mirror=sim)
    assert want(table), "the services did not reach what the simulation did"
    return seed, t


def new_casual(alice: Any, bob: Any) -> Match:
    """A casual match through an invite: alice (the inviter) is seat 0, bob seat 1."""
    inv = create_invite(alice)
    return accept_invite(inv.code, bob)


def snapshot(match_id: int) -> tuple[int, Any, str, int]:
    """What must not change after a refused request: version, state, status, event count."""
    m = Match.objects.get(pk=match_id)
    return m.version, m.state, m.status, MatchEvent.objects.filter(match_id=match_id).count()


def happened(kind: str, **where: Any) -> Callable[[Backend], bool]:
    """A ``want``: an engine event of ``kind`` (with these fields) has happened."""

    def check(b: Backend) -> bool:
        return any(
            e.get("type") == kind and all(e.get(k) == v for k, v in where.items()) for e in b.events
        )

    return check


def in_phase(phase: str) -> Callable[[Backend], bool]:
    def check(b: Backend) -> bool:
        return b.state is not None and b.state.phase == phase

    return check
