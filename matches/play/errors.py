"""The one error of the platform's match logic: a request that changes nothing.

``ServiceError.code`` is a stable word (docs/protocol.md, "Errors"); ``message``
is for people, translated where it is made. The engine's refusal codes get
their sentences here, once.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop


class ServiceError(Exception):
    """A request that changes nothing. ``code`` is a stable word; ``message`` is for people."""

    def __init__(
        self, code: str, message: str, *, version: int | None = None, match_id: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.version = version
        self.match_id = match_id  # the match a ``busy`` player should go back to


_ILLEGAL_MESSAGES = {
    "not_your_turn": gettext_noop("It is not your turn."),
    "not_revealed": gettext_noop("Show your hand first."),
    "not_awaiting": gettext_noop("Nothing waits for a reveal."),
    "bad_position": gettext_noop("That position is not open."),
    "no_match": gettext_noop("That tile does not match that end."),
    "not_in_hand": gettext_noop("That tile is not in your hand."),
    "forced_opening": gettext_noop("You must open with the forced tile."),
    "must_place": gettext_noop("You must place a tile (the one you drew, if you drew)."),
    "must_draw": gettext_noop("Draw from the talon."),
    "talon_empty": gettext_noop("The talon is empty."),
    "bad_amount": gettext_noop(
        "Bids are multiples of 5: at least 15, and a raise at least 5 more."
    ),
    "unaffordable": gettext_noop("You cannot afford that bid."),
    "bid_standing": gettext_noop("A bid stands: accept or raise."),
    "no_bid": gettext_noop("There is no bid to accept."),
    "bad_phase": gettext_noop("That is not possible in this phase."),
    "match_over": gettext_noop("The match is over."),
    "timeout": gettext_noop("Your time ran out."),
}


def illegal_message(code: str) -> str:
    return _(_ILLEGAL_MESSAGES.get(code, gettext_noop("That move is not allowed.")))
