"""Players' names with the BOT badge: ``{{ user|player_name }}``, ``{{ user|bot_badge }}``,
``{% seat_name match 0 %}``, ``{% bot_badge_html %}``.

The badge marks every account a program plays for (``User.plays_as_bot``: a
user's bot account or one of the site's computer players), wherever a name is
shown. The match page draws the same badge in its Jinja fragments
(``matches/live/_macros.html``, from ``view.match.bots``).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from accounts.display import display_name, rating_text

register = template.Library()


@register.simple_tag(name="bot_badge_html")
def badge() -> SafeString:
    """The BOT badge itself (``{% bot_badge_html %}``), for a name known to be a bot's."""
    return format_html(
        '<span class="bot-badge" title="{}" data-testid="bot-badge">{}</span>',
        _("A program plays for this account"),
        _("BOT"),
    )


@register.filter
def bot_badge(user: Any) -> SafeString:
    """The BOT badge if a program plays for ``user`` (🤖 and the level for the site's
    computer players), else nothing."""
    level = getattr(user, "computer_level", None)
    if level:
        return computer_badge(level)
    return badge() if getattr(user, "plays_as_bot", False) else mark_safe("")


@register.simple_tag(name="computer_badge_html")
def computer_badge(level: int) -> SafeString:
    from accounts.models import COMPUTER_LEVELS

    # The level is in the name (コンピューター（中級）): the badge is the robot alone.
    return format_html(
        '<span class="bot-badge bot-badge--computer" title="{}" data-testid="computer-badge"'
        ' data-level="{}">🤖</span>',
        _("The computer plays for this account (%(level)s)")
        % {"level": COMPUTER_LEVELS.get(level, level)},
        level,
    )


@register.filter
def player_name(user: Any) -> SafeString:
    """``user``'s name (the computer's with its level) followed by its badge, if any."""
    return format_html("{}{}", display_name(user), bot_badge(user))


@register.filter(name="rating_text")
def rating_text_filter(display: Any) -> str:
    """``{{ "1520?"|rating_text }}`` → 1520（暫定）."""
    return rating_text(display)


@register.simple_tag
def user_rating(user: Any) -> str:
    """``user``'s current rating as people read it (1500（暫定） before 30 rated matches)."""
    from ratings.services import rating_of

    return rating_text(rating_of(user).display)


@register.simple_tag
def seat_name(match: Any, seat: int) -> SafeString:
    """The name at ``seat`` of ``match`` (a same-device guest's too), with its badge."""
    player = match.player0 if seat == 0 else match.player1
    if player is None:
        return format_html("{}", match.guest_name)
    return player_name(player)
