"""Small filters for the history templates: tiles, signed numbers, clock times."""

from __future__ import annotations

import re
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


def _drawn(a: int, b: int) -> str:
    from matches.ui.board_svg import domino as draw

    return str(draw((a, b), vertical=True)["svg"])


@register.filter
def domino(t: Sequence[int]) -> SafeString:
    """The tile drawn as the match page draws a hand's (matches.ui.board_svg.domino): pips
    read at a glance where ``[3|6]`` must be read digit by digit. The drawing is a
    ``<use>`` of the page's ``domino_symbols``: a step swapped in by htmx stays small."""
    a, b = sorted((int(t[0]), int(t[1])))
    box = re.search(r'viewBox="[^"]*"', _drawn(a, b))
    assert box is not None
    return mark_safe(  # noqa: S308 - built from two ints
        f'<svg class="domino-svg is-vertical" {box[0]} aria-hidden="true" focusable="false">'
        f'<use href="#domino-{a}-{b}"/></svg>'
    )


_PAINT = {
    "domino__body": 'fill="#fffdf6" stroke="#2d2a26" stroke-width="1"',
    "domino__line": 'stroke="#8a857b" stroke-width="1"',
    "pip": 'fill="#1b1a18"',
}


@register.simple_tag
def domino_symbols() -> SafeString:
    """The 28 tiles' drawings once, as ``<symbol>``s for ``domino`` to use (outside #replay,
    so a swapped step keeps them)."""
    out = []
    for a in range(7):
        for b in range(a, 7):
            svg = _drawn(a, b)
            box = re.search(r'viewBox="[^"]*"', svg)
            assert box is not None
            inner = svg[svg.index(">") + 1 : svg.rindex("</svg>")]
            # Colours as attributes: a <use> copy is not styled by the page's selectors.
            for cls, paint in _PAINT.items():
                inner = inner.replace(f'class="{cls}"', f'class="{cls}" {paint}')
            out.append(f'<symbol id="domino-{a}-{b}" {box[0]}>{inner}</symbol>')
    return mark_safe(  # noqa: S308 - built from ints
        '<svg class="domino-sprite" width="0" height="0" aria-hidden="true" focusable="false">'
        + "".join(out)
        + "</svg>"
    )


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
