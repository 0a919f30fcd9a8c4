"""Small filters for the history templates: tiles, signed numbers, clock times."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.safestring import SafeString, mark_safe

from matches.ui.text import side_label as _side_label
from matches.ui.text import tile_label as tile_text

register = template.Library()


@register.filter
def tile(t: Sequence[int] | None) -> str:
    """``[3|6]``."""
    return tile_text(t)


@register.filter
def domino(t: Sequence[int]) -> SafeString:
    """The tile drawn as the match page draws a hand's (matches.ui.board_svg.domino): pips
    read at a glance where ``[3|6]`` must be read digit by digit. Numbers only go in."""
    from matches.ui.board_svg import domino as draw

    return mark_safe(draw(t, vertical=True)["svg"])  # noqa: S308 - built from two ints


@register.filter
def signed(n: int | None) -> str:
    """``+10``, ``−10`` (a real minus sign), ``±0``; empty for None."""
    if n is None:
        return ""
    if n > 0:
        return f"+{n}"
    if n < 0:
        return f"\u2212{-n}"
    return "\u00b10"


@register.filter
def seconds(ms: int | None) -> str:
    """Milliseconds as seconds with one decimal: ``3.2``."""
    if ms is None:
        return ""
    return f"{ms / 1000:.1f}"


@register.filter
def clock(ms: int | None) -> str:
    """Milliseconds as ``m:ss`` (rounded down, as a clock shows)."""
    if ms is None:
        return ""
    s = max(0, int(ms)) // 1000
    return f"{s // 60}:{s % 60:02d}"


@register.filter
def percent_of(part: int | None, whole: int | None) -> int:
    """``part`` as a whole percentage of ``whole`` (0 when ``whole`` is 0)."""
    if not part or not whole:
        return 0
    return max(1, min(100, round(100 * part / whole)))


@register.filter
def side(name: str | None) -> str:
    return _side_label(name or "")
