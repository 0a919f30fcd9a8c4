"""How players and ratings are shown to people (never stored or sent to programs this way).

- The site's computer players are ``computer-1`` … ``computer-3`` as accounts (their
  URLs, the protocol's ``names``); people read コンピューター（初級）.
- A provisional rating travels as ``"1520?"`` (the protocol's ``display``); people read
  1520（暫定）, the same on every page.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _


def computer_name(level: Any) -> str:
    """``コンピューター（初級）`` for the computer player of ``level`` (1–3)."""
    from accounts.models import COMPUTER_LEVELS

    return _("Computer (%(level)s)") % {"level": COMPUTER_LEVELS.get(level, level)}


def display_name(user: Any) -> str:
    """The name shown for ``user``: its username, or the computer's name and level."""
    level = getattr(user, "computer_level", None)
    return computer_name(level) if level else str(user.get_username())


def rating_text(display: Any) -> str:
    """``"1520?"`` → ``1520（暫定）``; a settled rating (``"1483"``, ``1483``) as it is."""
    text = "" if display is None else str(display)
    if text.endswith("?"):
        return _("%(rating)s (provisional)") % {"rating": text[:-1]}
    return text
