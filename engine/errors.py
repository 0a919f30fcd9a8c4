"""The engine's one exception."""

from __future__ import annotations


class IllegalAction(ValueError):
    """An action the rules do not allow now. Nothing was changed.

    ``code`` is a short stable word (``not_your_turn``, ``bad_position``,
    ``unaffordable``, ...) that clients may switch on; the message is for people.

    >>> e = IllegalAction("stale", "old version")
    >>> e.code, str(e)
    ('stale', 'old version')
    """

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
