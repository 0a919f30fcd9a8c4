"""The board as SVG, drawn once here: the live match's board and the boards drawn for reading.

The geometry is ``table.geometry``'s. The live board (:func:`board_fragment`)
comes from a seat's view and its positions are buttons; a board for reading
(:func:`drawn`: the rules page's figures, the replay) comes from an engine
``Layout`` and nothing on it is tapped. ``templates/board/_board.html`` places
the reading board's drawing.

The numbers drawn come from the engine alone: ``counted_ends`` gives each
counted end's contribution and ``legal_positions`` the hollow dots (RULES §3, §4).
"""

from __future__ import annotations

import functools
from typing import Any

import orjson
from django.core.signals import setting_changed
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe
from markupsafe import Markup, escape

import engine
from engine.layout import Layout
from matches.ui.i18n import _, in_language, translator
from matches.ui.templating import OOB, render
from matches.ui.text import seat_name, shown_name, side_label, tile_key, tile_label
from table import geometry as board


def view_parts(layout: Layout) -> dict[str, list[dict[str, Any]]]:
    """``layout``, ``legal`` and ``ends`` in the shapes of ``engine.view_for``."""
    return {
        "layout": [
            {
                "tile": list(p.tile),
                "at": None if p.at is None else {"tile": list(p.at[0]), "side": p.at[1]},
                "conn": p.conn,
                "player": p.player,
            }
            for p in layout.placed
        ],
        "legal": [
            {"tile": list(t), "side": side, "value": v} for t, side, v in layout.legal_positions()
        ],
        "ends": [{"tile": list(t), "value": v} for t, v in layout.counted_ends()],
    }


def drawn(layout: Layout, *, mark_last: bool = True) -> dict[str, Any]:
    """The board of ``layout`` for ``templates/board/_board.html``.

    ``mark_last`` marks the last tile placed (the figure's or the step's placement).

    The geometry's keys, ``tiles_svg`` and ``positions_svg`` (drawn by the same
    code as the live board); ``ends`` (the counted ends in the engine's
    order), ``ends_sum`` (``"4 + 1"``), ``end_total`` and ``score``.
    """
    parts = view_parts(layout)
    g = board.geometry(parts["layout"], parts["legal"], parts["ends"])
    for t in g["tiles"]:
        t["last"] = t["last"] and mark_last
    # The same drawing as the live board's, its positions drawn but not buttons.
    g["tiles_svg"] = _tiles_svg(g["tiles"])
    g["positions_svg"] = Markup("".join(_reading_position(p) for p in g["positions"]))  # noqa: S704
    values = [e["value"] for e in parts["ends"]]
    g["ends"] = parts["ends"]
    g["ends_sum"] = " + ".join(str(v) for v in values) or "0"
    g["end_total"] = sum(values)
    g["score"] = engine.points_for(g["end_total"])
    return g


def pips_svg(pips: list[tuple[float, float]], r: float = 2.5) -> SafeString:
    """The pips as SVG circles (numbers only), built here: a template loop is far slower."""
    return mark_safe(  # noqa: S308 - only numbers go in
        "".join(f'<circle class="pip" cx="{x}" cy="{y}" r="{r}"/>' for x, y in pips)
    )


def domino(tile: Any, *, vertical: bool = True) -> dict[str, Any]:
    """A free-standing domino (hand, settlement): its two halves' pips in a 1×2 box of squares.

    ``svg`` is its drawing; callers may add keys to the (fresh) dict they get.
    """
    return dict(_domino(int(tile[0]), int(tile[1]), vertical))


@functools.lru_cache(maxsize=64)
def _domino(a: int, b: int, vertical: bool) -> dict[str, Any]:
    # 28 tiles × 2 orientations: each drawn once per process (numbers only go in).
    u = board.UNIT
    tile = (a, b)
    pips = []
    for i, v in enumerate((a, b)):
        cx, cy = (0.5, 0.5 + i) if vertical else (0.5 + i, 0.5)
        for ox, oy in board.pip_offsets(v, vertical):
            pips.append((board._r((cx + ox) * u), board._r((cy + oy) * u)))
    w, h = (u, 2 * u) if vertical else (2 * u, u)
    line = (3, u, u - 3, u) if vertical else (u, 3, u, u - 3)
    svg = (
        f'<svg class="domino-svg{" is-vertical" if vertical else ""}" viewBox="0 0 {w} {h}"'
        f' aria-hidden="true" focusable="false"><rect class="domino__body" x="1" y="1"'
        f' width="{w - 2}" height="{h - 2}" rx="4"/><line class="domino__line" x1="{line[0]}"'
        f' y1="{line[1]}" x2="{line[2]}" y2="{line[3]}"/>{pips_svg(pips)}</svg>'
    )
    return {
        "tile": [a, b],
        "key": tile_key(tile),
        "label": tile_label(tile),
        "w": w,
        "h": h,
        "line": line,
        "vertical": vertical,
        "double": a == b,
        "svg": Markup(svg),  # noqa: S704 - numbers only
    }


@in_language
def board_fragment(view: dict[str, Any], *, oob: bool) -> str:
    """The board's fragment: the same for every audience of a version, so drawn once.

    It depends only on the layout, its legal positions and counted ends, and the
    phase (an empty table's text); a move that places no tile (an auction step,
    say) reuses the last drawing.
    """
    phase = view.get("phase")
    layout = view.get("layout")
    # orjson: this key is made for every render of every HTML socket (json.dumps was
    # 1.4 % of a web process's CPU at 200 live matches).
    key = orjson.dumps([layout, view.get("legal"), view.get("ends"), view.get("end_total")])
    scorer, score = _last_score(view)
    return _board_fragment(key, phase, translation.get_language(), oob, scorer, score)


def _last_score(view: dict[str, Any]) -> tuple[str | None, int]:
    """Who scored with the last tile on the table, and how much (its ``place`` event)."""
    layout = view.get("layout")
    if not layout:
        return None, 0
    last = layout[-1]["tile"]
    for ev in reversed(view.get("events") or []):
        if (
            ev.get("type") == "place"
            and ev.get("tile") == last
            and ev.get("hand") == view.get("hand_no")
        ):
            if not ev.get("score"):
                return None, 0
            m = view["match"]
            names = m.get("names") or ["", ""]
            seat = ev.get("player")
            shown = shown_name(m, seat, seat_name(names, seat)) if seat in (0, 1) else None
            return shown, int(ev["score"])
    return None, 0


@functools.lru_cache(maxsize=512)
def _board_fragment(
    key: bytes, phase: str | None, language: str, oob: bool, scorer: str | None, score: int
) -> str:
    layout, legal, ends, end_total = orjson.loads(key)
    view = {"layout": layout, "legal": legal, "ends": ends, "end_total": end_total}
    g = _board(view)
    if g is not None and scorer is not None:
        g["scored"] = _("%(name)s scores %(n)s") % {"name": scorer, "n": score}
    return render(
        "board.html",
        {"board": g, "phase": phase, "oob_attr": OOB if oob else "", "_": translator(language)},
    )


def _board(view: dict[str, Any]) -> dict[str, Any] | None:
    layout = view.get("layout")
    if layout is None:
        return None
    g = board.geometry(layout, view.get("legal"), view.get("ends"))
    g["tiles_svg"] = _tiles_svg(g["tiles"])
    g["positions_svg"] = Markup("".join(_board_position(p) for p in g["positions"]))  # noqa: S704
    ends = view.get("ends") or []
    g["ends_sum"] = " + ".join(str(e["value"]) for e in ends) or "0"
    g["end_total"] = view.get("end_total", 0)
    g["scored"] = None
    return g


def _tiles_svg(tiles: list[dict[str, Any]]) -> Markup:
    """The tiles on the table as SVG; each tile's drawing is made once (it keeps its place)."""
    spinner = _("spinner")
    return Markup("".join(  # noqa: S704 - numbers and escaped labels only
        _board_tile(t["key"], t["x"], t["y"], t["w"], t["h"], tuple(t["line"]),
                    tuple(t["pips"]), t["spinner"], t["last"], spinner)
        for t in tiles
    ))  # fmt: skip


def _reading_position(p: dict[str, Any]) -> str:
    """An open position on a board drawn for reading: its dot, and its count if it counts."""
    count = p["count"]
    cx, cy = p["cx"], p["cy"]
    attrs = f'data-pos="{p["key"]}" data-value="{p["value"]}"'
    if count is None:
        return f'<g class="pos" {attrs}><circle class="pos__dot" cx="{cx}" cy="{cy}" r="6"/></g>'
    return (
        f'<g class="pos pos--count" {attrs} data-count="{count}">'
        f'<circle class="pos__dot" cx="{cx}" cy="{cy}" r="9"/>'
        f'<text class="pos__num" x="{cx}" y="{cy}" dy="0.36em">{count}</text></g>'
    )


@functools.lru_cache(maxsize=4096)
def _board_tile(
    key: str,
    x: float,
    y: float,
    w: float,
    h: float,
    line: tuple[float, ...],
    pips: tuple[tuple[float, float], ...],
    spinner: bool,
    last: bool,
    spinner_word: str,
) -> str:
    """One tile on the table, as SVG (numbers, and the tile's name as its title)."""
    a, b = key.split("-")
    cls = "domino" + (" is-spinner" if spinner else "") + (" is-last" if last else "")
    title = f"[{a}|{b}]" + (f" {escape(spinner_word)}" if spinner else "")
    mark = ' data-spinner="1"' if spinner else ""
    return (
        f'<g class="{cls}" data-testid="board-tile" data-tile="{key}"{mark}><title>{title}</title>'
        f'<rect class="domino__body" x="{x}" y="{y}" width="{w}" height="{h}" rx="3.5"/>'
        f'<line class="domino__line" x1="{line[0]}" y1="{line[1]}" x2="{line[2]}" y2="{line[3]}"/>'
        f"{pips_svg(list(pips), 2.4)}</g>"
    )


def _board_position(p: dict[str, Any]) -> str:
    """One legal position: a button (match.js lights it), its dot, and its count if it counts."""
    label = escape(f"{tile_label(p['tile'])} {side_label(p['side'])}")
    count = p["count"]
    cx, cy = p["cx"], p["cy"]
    if count is None:
        return (
            f'<g class="pos" data-testid="pos" data-pos="{p["key"]}" data-value="{p["value"]}"'
            f' role="button" aria-disabled="true" aria-label="{label}"><title>{label}</title>'
            f'<circle class="pos__hit" cx="{cx}" cy="{cy}" r="14"/>'
            f'<circle class="pos__ring" cx="{cx}" cy="{cy}" r="11.5"/>'
            f'<circle class="pos__dot" cx="{cx}" cy="{cy}" r="6"/></g>'
        )
    counts = escape(_("counts %(n)s") % {"n": count})
    return (
        f'<g class="pos pos--count" data-testid="pos" data-pos="{p["key"]}"'
        # The name starts with the number drawn on the dot, and there is no <title>: axe
        # reads a title as text inside the button (label-content-name-mismatch).
        f' data-value="{p["value"]}" data-count="{count}" role="button" aria-disabled="true"'
        f' aria-label="{count}: {label}, {counts}">'
        f'<circle class="pos__hit" cx="{cx}" cy="{cy}" r="14"/>'
        f'<circle class="pos__ring" cx="{cx}" cy="{cy}" r="11.5"/>'
        f'<circle class="pos__dot" cx="{cx}" cy="{cy}" r="9"/>'
        f'<text class="pos__num" x="{cx}" y="{cy}" dy="0.36em">{count}</text></g>'
    )


def _forget_drawings(*, setting: str, **kwargs: Any) -> None:
    """Drawings hold translated words: drop them when tests swap the catalogues."""
    if setting in ("LOCALE_PATHS", "LANGUAGE_CODE", "LANGUAGES"):
        _board_fragment.cache_clear()
        _board_tile.cache_clear()


setting_changed.connect(_forget_drawings, dispatch_uid="matches.ui.board_svg.drawings")
