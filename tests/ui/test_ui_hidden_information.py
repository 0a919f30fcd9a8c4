"""Nothing rendered for a seat holds a tile that seat may not see (PROTOCOL.md, RULES §2, §5).

Whole seeded matches are played with the engine; after every change the
fragments (and now and then the full page) are rendered for each seat, and no
tile of the opponent's hand or of the talon may appear, except the hands
revealed in a hand's settlement.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.template.loader import render_to_string
from django.utils import translation
from ui_scenarios import random_match, seat_view

import engine
from matches.ui import fragments as render

TOKEN_PATTERNS = (
    re.compile(r'data-tile="(\d)-(\d)"'),
    re.compile(r'data-pos="(\d)-(\d):'),
    re.compile(r"\[(\d)\|(\d)\]"),
)
AT = re.compile(r'data-at="([^"]*)"')
SETTLEMENT = re.compile(r'<section id="sb-settlement".*?</section>', re.S)
# The rules help quotes the rules page's worked examples ("[1|4] opening"): rules text,
# the same for everybody, not anybody's tiles.
HELP = re.compile(r'<dialog id="sb-rules".*?</dialog>', re.S)


def tiles_in(html: str) -> set[tuple[int, int]]:
    found = {(int(a), int(b)) for p in TOKEN_PATTERNS for a, b in p.findall(html)}
    for at in AT.findall(html):
        for key in at.split():
            if key != "open":
                a, b = key.split(":")[0].split("-")
                found.add((int(a), int(b)))
    return found


def check(html: str, s: engine.MatchState, seat: int | None) -> None:
    talon = set(s.talon)
    hidden_hands: set[tuple[int, int]] = set()
    for p in (0, 1):
        if p != seat:
            hidden_hands |= set(s.hands[p])
    html = HELP.sub("", html)
    settlement = "".join(SETTLEMENT.findall(html))
    outside = SETTLEMENT.sub("", html)
    leaked = tiles_in(outside) & (talon | hidden_hands)
    assert not leaked, (s, seat, leaked)
    shown = tiles_in(settlement)
    assert not shown & talon, (s, seat)
    if shown:
        assert s.phase in (engine.HAND_OVER, engine.MATCH_OVER) and s.settlement is not None


@pytest.mark.parametrize(("jockey", "handoff"), [(None, False), (0, False), (1, True)])
def test_no_hidden_tile_is_ever_rendered(jockey: Any, handoff: bool) -> None:
    states = hands = 0
    for seed in range(100, 200):
        for i, (s, now) in enumerate(random_match(seed, jockey=jockey, handoff=handoff)):
            lang = ("en", "ja")[i % 2]
            if handoff:
                # One device: the seat to act once revealed, a spectator's view otherwise.
                seat = s.to_act if s.to_act is not None and not s.awaiting_reveal else None
                seats: tuple[int | None, ...] = (seat,)
                kind = "same_device"
            else:
                # Both seats, and a spectator (the public view: no hand at all).
                seats, kind = (0, 1, None), "casual"
            for seat in seats:
                v = seat_view(s, seat, now, kind=kind)
                v["match"]["watching"] = seat is None and not handoff
                with translation.override(lang):
                    check(render.render_changed(v, {}), s, seat)
                    if i % 60 == 0:
                        page = render_to_string("matches/match.html", render.page_context(v))
                        check(page, s, seat)
            states += 1
            hands = max(hands, s.hand_no + 1)
            if states > 200 and hands >= 3:
                return
    raise AssertionError(f"only {states} states, {hands} hands")


def test_the_check_itself_catches_a_leak() -> None:
    s, now = next((s, n) for s, n in random_match(3) if s.phase == "play" and s.layout.placed)
    v = seat_view(s, 0, now)
    v["events"] = [
        *v["events"],
        {"type": "draw", "player": 1, "tile": list(s.hands[1][0]), "hand": s.hand_no},
    ]
    with translation.override("en"), pytest.raises(AssertionError):
        check(render.render_changed(v, {}), s, 0)
