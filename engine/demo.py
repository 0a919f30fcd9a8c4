"""Watch one random match in the terminal.

    python -m engine.demo [--seed N] [--max-hands K]

Both seats play random legal moves (preferring a placement that scores, so
the match moves along), think for a few random seconds on the standard clock,
and the narrator, who sees everything, prints each hand: the deal, the
auction, every placement with what it is attached to and the counted ends,
draws and passes, the settlement, and the balances and clocks. If the match
is still going after ``--max-hands`` hands, the seat behind resigns.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import (
    AUCTION,
    HAND_OVER,
    MATCH_OVER,
    Action,
    ClockConfig,
    Deal,
    Event,
    MatchState,
    apply,
    expire,
    forced_action,
    legal_actions,
    new_match,
    next_hand,
)

NAMES = ("Seat 0", "Seat 1")
Tile = tuple[int, int]


def tile_str(t: Sequence[int]) -> str:
    return f"[{t[0]}|{t[1]}]"


def tiles_str(ts: Sequence[Sequence[int]]) -> str:
    return " ".join(tile_str(t) for t in ts) or "-"


def clock_str(ms: int) -> str:
    return f"{ms // 60_000}:{ms // 1000 % 60:02d}.{ms // 100 % 10}"


def ends_str(ends: list[dict[str, Any]], total: int) -> str:
    parts = " + ".join(f"{tile_str(e['tile'])}{e['value']}" for e in ends)
    return f"{parts or '0'} = {total}"


def layout_lines(s: MatchState) -> list[str]:
    """The layout as arms: each line is a chain of tiles, each attached to the one
    before it and turned so that touching halves meet; the first tile of an arm
    hangs on the named side of the opening tile or of the spinner (marked *)."""
    placed = s.layout.placed
    if not placed:
        return []
    spinner = s.layout.spinner
    kids: dict[Tile, list[Any]] = {}
    for p in placed[1:]:
        assert p.at is not None
        kids.setdefault(p.at[0], []).append(p)

    def shown(p: Any) -> str:
        a, b = p.tile
        if p.conn == "high":
            a, b = b, a
        return f"[{a}|{b}]" + ("*" if p.tile == spinner else "")

    root = placed[0]
    lines = [f"    {shown(root)} opening"]

    def arms(owner: Tile, indent: str) -> None:
        for first in kids.get(owner, []):
            chain = [first]
            # Only the opening tile and the spinner hold more than one arm.
            while chain[-1].tile != spinner and kids.get(chain[-1].tile):
                chain.append(kids[chain[-1].tile][0])
            lines.append(f"{indent}{first.at[1]:<10} {''.join(shown(p) for p in chain)}")
            if chain[-1].tile == spinner:
                arms(chain[-1].tile, indent + "    ")

    arms(root.tile, "      ")
    return lines


def choose(s: MatchState, rng: random.Random) -> Action:
    """A random legal action; a placement that scores is preferred, bids stay modest."""
    legal = legal_actions(s)
    if s.phase == AUCTION:
        bids = [a for a in legal if a.kind == "bid" and a.amount is not None and a.amount <= 35]
        others = [a for a in legal if a.kind != "bid"]
        if bids and rng.random() < 0.45:
            return rng.choice(bids)
        return rng.choice(others or legal)
    scoring = [a for a in legal if a.kind == "place" and _scores(s, a)]
    if scoring and rng.random() < 0.8:
        return rng.choice(scoring)
    return rng.choice(legal)


def _scores(s: MatchState, a: Action) -> bool:
    new, _ = apply(s, a, s.last_t)
    return new.balances[a.player] > s.balances[a.player]


class Narrator:
    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.draws: list[str] = []

    def flush_draws(self, player: int) -> None:
        if self.draws:
            self.out(f"  {NAMES[player]} draws {', '.join(self.draws)}")
            self.draws = []

    def event(self, s: MatchState, ev: Event) -> None:
        kind, p = ev["type"], ev["player"]
        who = NAMES[p] if p is not None else ""
        if kind == "draw":
            self.draws.append(tile_str(ev["tile"]) + (" (fits)" if ev["fits"] else ""))
            return
        if p is not None:
            self.flush_draws(p)
        if kind == "hand_start":
            self.hand_start(s, ev)
        elif kind == "decline":
            self.out(f"  {who} declines: the jockey {NAMES[s.jockey or 0]} opens free")
        elif kind == "bid":
            self.out(f"  {who} bids {ev['amount']}")
        elif kind == "accept":
            payer = NAMES[ev["payer"]]
            self.out(
                f"  {who} accepts: {payer} pays {ev['cost']} for its bid of {ev['amount']}"
                f" and opens  (balances {ev['balances'][0]} / {ev['balances'][1]})"
            )
        elif kind == "place":
            at = ev["at"]
            on = "opening" if at is None else f"on {tile_str(at['tile'])} {at['side']}"
            spin = "*" if tuple(ev["tile"]) == s.layout.spinner else " "
            move = f"{who}: {tile_str(ev['tile'])}{spin} {on}"
            score = f"  -> +{ev['score']}" if ev["score"] else ""
            self.out(f"  {move:<36} ends {ends_str(ev['ends'], ev['total'])}{score}")
        elif kind == "pass":
            self.out(f"  {who} cannot play and the talon is empty: passes")
        elif kind == "reveal":
            self.out(f"  {who} shows its hand")
        elif kind == "resign":
            self.out(f"  {who} resigns")
        elif kind == "timeout":
            self.out(f"  {who} runs out of time")
        elif kind == "hand_end":
            self.hand_end(s, ev)
        elif kind == "match_end":
            how = {"balance": "a balance reached 0", "time": "on time", "resign": "by resignation"}
            self.out("")
            self.out(f"RESULT: {NAMES[ev['winner']]} wins ({how[ev['how']]}).")
            self.out(f"  final balances {ev['balances'][0]} / {ev['balances'][1]}")

    def hand_start(self, s: MatchState, ev: Event) -> None:
        self.out("")
        self.out(f"=== Hand {s.hand_no + 1} " + "=" * 50)
        for seat in (0, 1):
            self.out(f"  {NAMES[seat]} holds {tiles_str(s.hands[seat])}")
        self.out(
            f"  talon: {len(s.talon)} tiles.  (* marks the spinner; ends list each counted end)"
        )
        if ev["jockey"] is None:
            self.out("  forced opening: the highest double (or heaviest tile) dealt opens")
        else:
            self.out(
                f"  auction: {NAMES[ev['jockey']]} is the jockey (went out last hand);"
                f" {NAMES[1 - ev['jockey']]} speaks first"
            )

    def hand_end(self, s: MatchState, ev: Event) -> None:
        self.out("  layout at the end of the hand:")
        for line in layout_lines(s):
            self.out(line)
        if ev["how"] == "domino":
            self.out(f"  {NAMES[ev['went_out']]} goes out (domino) and will be the jockey;")
            self.out(
                f"  no points for the pips left ({NAMES[1 - ev['went_out']]} holds"
                f" {tiles_str(ev['hands'][1 - ev['went_out']])})"
            )
        else:
            pips = ev["pips"]
            self.out(
                f"  block: both passed. Pips left: {NAMES[0]} {pips[0]}"
                f" {tiles_str(ev['hands'][0])}, {NAMES[1]} {pips[1]} {tiles_str(ev['hands'][1])}"
            )
            r = ev["receiver"]
            if r is None:
                self.out("  equal totals: nothing moves")
            else:
                self.out(
                    f"  {NAMES[r]} (lighter) receives {NAMES[1 - r]}'s {pips[1 - r]} rounded"
                    f" to {ev['owed']}: {ev['moved']} move"
                )
        b = ev["balances"]
        clocks = (
            "" if s.main is None else f"; main time {clock_str(s.main[0])} / {clock_str(s.main[1])}"
        )
        self.out(f"  balances {b[0]} / {b[1]}{clocks}")


def play(seed: int, max_hands: int, out: Callable[[str], None] = print) -> MatchState:
    rng = random.Random(seed)
    narrator = Narrator(out)
    out(f"Spectacular Bid - a random match (seed {seed})")
    out("Each player starts with 150 points and 2:00 of main time (+10 s delay per decision).")
    s = new_match(Deal.shuffled(rng), now_ms=0, clock=ClockConfig(), jockey=None)
    for ev in s.log:
        narrator.event(s, ev)
    t = 0
    while s.phase != MATCH_OVER:
        if s.phase == HAND_OVER:
            if s.hand_no + 1 >= max_hands:
                behind = 0 if s.balances[0] < s.balances[1] else 1
                out("")
                out(f"(the demo stops after {max_hands} hands: the seat behind resigns)")
                s, events = apply(s, Action("resign", behind), t)
            else:
                t += rng.randint(2000, 6000)  # Continue pressed; the clock was stopped
                s, events = next_hand(s, Deal.shuffled(rng), t)
        else:
            action = forced_action(s)
            if action is None:
                action = choose(s, rng)
                t += rng.choice((1500, 3000, 6000, 9000, 12_000, 16_000, 20_000))
            s2, events = expire(s, t)
            if not events:
                s2, events = apply(s, action, t)
            s = s2
        for ev in events:
            narrator.event(s, ev)
    return s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.demo", description=__doc__)
    parser.add_argument("--seed", type=int, default=None, help="replay a given match")
    parser.add_argument("--max-hands", type=int, default=6)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    try:
        play(seed, max(1, args.max_hands))
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
