"""The computer player: plays a seat of Spectacular Bid from that seat's view only.

Pure Python (the standard library and ``engine``), no Django. The public surface:

- ``Player(level, rng)`` — one seat's player: give ``observe`` every view the
  seat receives; it answers an action frame when one is due, else ``None``;
- ``decide(view, history, level=..., rng=...)`` — one decision, stateless;
- ``Memory`` — a seat's events of the current hand, gathered across frames;
- ``NotAView`` — raised for input that is not a plain JSON view;
- ``LEVELS`` — 1 入門 (beginner), 2 中級 (intermediate), 3 上級 (advanced).

>>> import random, engine
>>> s = engine.new_match(engine.Deal.shuffled(random.Random(1)), clock=None)
>>> s, _ = engine.apply(s, engine.forced_action(s), 0)  # the server plays the forced opening
>>> player = Player(level=2, rng=random.Random(7))
>>> frame = player.observe(engine.view_for(s, s.to_act, 0))
>>> frame["op"], sorted(frame)
('place', ['at', 'op', 'tile'])
>>> player.observe(s)
Traceback (most recent call last):
...
bots.seat.NotAView: the view must be plain JSON data, not MatchState: ...
"""

import random

from .player import LEVELS, PLAYOUTS, TIME_LIMIT_MS, Frame, decide, decide_plain
from .seat import Memory, NotAView, hand_events, seat_view

__all__ = ["LEVELS", "PLAYOUTS", "TIME_LIMIT_MS", "Frame", "Memory", "NotAView", "Player", "decide"]


class Player:
    """One seat's computer player at ``level`` (1, 2 or 3), with its own ``Memory``.

    ``playouts`` and ``time_limit_ms`` are level 3's budget (see ``decide``).
    """

    def __init__(
        self,
        level: int,
        rng: random.Random,
        *,
        playouts: int = PLAYOUTS,
        time_limit_ms: float | None = TIME_LIMIT_MS,
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"level is one of {LEVELS}")
        if not isinstance(rng, random.Random):
            raise TypeError("rng is a random.Random")
        self.level = level
        self.rng = rng
        self.playouts = playouts
        self.time_limit_ms = time_limit_ms
        self.memory = Memory()

    def observe(self, view: object) -> Frame | None:
        """Remember ``view``'s events; the action to send if this seat must decide now."""
        v = seat_view(view)
        self.memory.remember(v)
        return decide_plain(
            v,
            hand_events(v, self.memory.events),
            self.level,
            self.rng,
            self.playouts,
            self.time_limit_ms,
        )
