"""The match page as server-rendered HTML, built from one seat's view (docs/protocol.md).

- ``page_context(view)`` — the context of ``templates/matches/match.html`` (the full page);
- ``render_changed(view, sent)`` — the HTML pushed over the htmx WebSocket after every
  change: one top-level element per part of the page that changed, each with ``id`` and
  ``hx-swap-oob="true"``;
- ``render_error(code, message)`` — a toast, swapped in the same way.

Everything rendered comes from the view dict and nothing else, so nothing a seat
may not see can reach its page: the opponent's tiles appear only in a hand's
settlement, where the view reveals them. Strings go through gettext in the
active language (the consumer wraps the call in ``translation.override``).
"""

from __future__ import annotations

from typing import Any

from django.utils.safestring import mark_safe

from matches.ui.board_svg import board_fragment
from matches.ui.context import build
from matches.ui.i18n import in_language
from matches.ui.templating import OOB, render

# The fragment templates (Jinja2, templates/matches/live/), in page order; each
# renders one element with the id given.
FRAGMENTS = (
    ("sb-status", "status.html"),
    ("sb-opponent", "opponent.html"),
    ("sb-board", "board.html"),
    ("sb-auction", "auction.html"),
    ("sb-hand", "hand.html"),
    ("sb-me", "me.html"),
    ("sb-settlement", "settlement.html"),
    ("sb-log", "log.html"),
    ("sb-overlay", "overlay.html"),
)


@in_language
def page_context(view: dict[str, Any]) -> dict[str, Any]:
    """The context of ``matches/match.html``: the whole page for ``view``.

    ``frags`` holds each fragment's HTML (``frags.status``, ``frags.board``, …),
    rendered as the socket renders them but without ``hx-swap-oob``.
    """
    ctx = build(view)
    ctx["oob"] = False
    ctx["oob_attr"] = ""
    ctx["frags"] = {
        fid.removeprefix("sb-"): mark_safe(_fragment(fid, t, view, ctx))  # noqa: S308
        for fid, t in FRAGMENTS
    }
    ctx["frags"]["toast"] = mark_safe(render("toast.html", {"oob_attr": ""}))  # noqa: S308
    return ctx


# The parts drawn from the server's clock (the clocks' and the status line's
# ``data-server-now``): sent again on connect even to a page showing this version.
TIMED = frozenset({"sb-status", "sb-me", "sb-opponent"})


@in_language
def render_changed(
    view: dict[str, Any], sent: dict[str, str], *, only: frozenset[str] | None = None
) -> str:
    """The fragments of ``view`` that differ from those in ``sent`` (which is updated).

    A socket keeps what it last sent of each part of the page, so a move sends
    the board, the hand and the clocks, not the unchanged auction panel or log.
    With ``only``, the others are noted in ``sent`` as the page's already, not sent
    (a page that connects showing this very version: see the consumer).
    """
    ctx = build(view)
    ctx["oob"] = True
    ctx["oob_attr"] = OOB
    out = []
    for fid, template in FRAGMENTS:
        inputs = _INPUTS.get(fid)
        if inputs is not None:
            # A part whose inputs are what they were is what it was: not drawn again.
            key = repr([ctx.get(k) for k in inputs] + [_names(ctx)])
            if sent.get(f"{fid}:in") == key and fid in sent:
                continue
            sent[f"{fid}:in"] = key
        html = _fragment(fid, template, view, ctx)
        if sent.get(fid) != html:
            sent[fid] = html
            if only is None or fid in only:
                out.append(html)
    return "".join(out)


# The parts that change seldom, and the context entries each is drawn from alone
# (besides the players' names). The others change with nearly every move.
_INPUTS = {
    "sb-auction": ("auction",),
    "sb-settlement": ("settlement", "result", "rematch", "after", "cont"),
    "sb-log": ("log",),
    "sb-overlay": ("overlay", "kind", "kind_label"),
}


def _names(ctx: dict[str, Any]) -> list[Any]:
    return [p.get("name") for p in ctx.get("players") or []]


def _fragment(fid: str, template: str, view: dict[str, Any], ctx: dict[str, Any]) -> str:
    if fid == "sb-board":
        return board_fragment(view, oob=ctx["oob"])
    return render(template, ctx)


@in_language
def render_error(code: str, message: str) -> str:
    """A toast for an error frame; it replaces the previous toast and fades by itself."""
    return render("toast.html", {"code": code, "message": message, "oob_attr": OOB})
