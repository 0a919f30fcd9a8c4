"""The match page as server-rendered HTML, built from one seat's view (docs/protocol.md).

- ``page_context(view)`` — the context of ``templates/matches/match.html`` (the full page);
- ``render_fragments(view)`` — the HTML pushed over the htmx WebSocket after every change:
  one top-level element per part of the page, each with ``id`` and ``hx-swap-oob="true"``;
- ``render_error(code, message)`` — a toast, swapped in the same way.

Everything rendered comes from the view dict and nothing else, so nothing a seat
may not see can reach its page: the opponent's tiles appear only in a hand's
settlement, where the view reveals them. Strings go through gettext in the
active language (the consumer wraps the call in ``translation.override``).
"""

from __future__ import annotations

import contextvars
import functools
import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_noop, ngettext, pgettext
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from . import board, fairplay

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
LIVE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "matches" / "live"


def _translate(message: str) -> Markup:
    """``_`` in the live templates: the translation, escaped, as ``Markup``.

    So ``_("%(name)s is deciding…") % {"name": name}`` escapes the name and keeps
    an argument that is already HTML (a countdown) as it is.
    """
    return Markup(escape(_(message)))


# language → msgid → translation: the catalogues do not change while the process
# runs, and Django's gettext costs several context lookups per call — a render
# makes dozens (tests that swap catalogues clear it: _forget_translations).
_TRANSLATED: dict[str, dict[str, str]] = {}


# The language of the render under way (set by the entry points for their call,
# ``_in_language``): asking Django each time costs more than the translation itself.
_LANGUAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar("sb_render_language")


def _in_language(fn: Any) -> Any:
    """Run ``fn`` with the active language noted in ``_LANGUAGE``, and forget it after."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _LANGUAGE.set(translation.get_language() or "")
        try:
            return fn(*args, **kwargs)
        finally:
            _LANGUAGE.reset(token)

    return wrapper


def _(message: str) -> str:
    """``gettext``, remembered per language."""
    lang = _LANGUAGE.get(None) or translation.get_language() or ""
    done = _TRANSLATED.get(lang)
    if done is None:
        done = _TRANSLATED[lang] = {}
    out = done.get(message)
    if out is None:
        out = done[message] = gettext(message)
    return out


@functools.lru_cache(maxsize=8)
def _translator(language: str) -> Any:
    """``_`` for one language, remembering each string it translated (the catalogue is fixed)."""
    done: dict[str, Markup] = {}

    def translate(message: str) -> Markup:
        out = done.get(message)
        if out is None:
            out = done[message] = _translate(message)
        return out

    return translate


def _forget_translations(*, setting: str, **kwargs: Any) -> None:
    """Tests may swap the catalogues (``LOCALE_PATHS``): drop what was translated with the old."""
    if setting in ("LOCALE_PATHS", "LANGUAGE_CODE", "LANGUAGES"):
        _TRANSLATED.clear()
        _translator.cache_clear()
        _board_fragment.cache_clear()
        _board_tile.cache_clear()


setting_changed.connect(_forget_translations, dispatch_uid="matches.render.translations")


class _Environment(Environment):  # type: ignore[misc]
    """Jinja's environment, reading a dict's keys first.

    The fragments' contexts are plain dicts: ``p.name`` is ``p["name"]``. Jinja
    tries an attribute first and a key only after the attribute lookup failed,
    which on every one of a fragment's hundreds of lookups cost an exception.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@functools.cache
def _jinja() -> Environment:
    env = _Environment(
        loader=FileSystemLoader(LIVE_TEMPLATES),
        autoescape=True,
        auto_reload=bool(settings.DEBUG),
        keep_trailing_newline=False,
    )
    env.globals["_"] = _translate
    # The macros as one module, made once: importing them in each fragment costs a
    # module per render.
    env.globals["m"] = env.get_template("_macros.html").module
    return env


@functools.lru_cache(maxsize=32)
def _template(name: str) -> Any:
    return _jinja().get_template(name)


OOB = Markup(' hx-swap-oob="true"')


def _render(template: str, ctx: dict[str, Any]) -> str:
    if settings.DEBUG:  # templates reload as they change
        return _jinja().get_template(template).render(ctx)
    return _template(template).render(ctx)


CHIP = 5  # points per chip (RULES §1)

# Translated elsewhere through a wrapper makemessages cannot see (the consumers'
# ``self._t``, matches/consumers.py and matches/lobby_consumer.py); listed here so
# that the catalogue has them.
_ELSEWHERE = (
    gettext_noop("That frame is not understood."),
    gettext_noop("Frames are JSON text."),
    gettext_noop("That frame is too large."),
    gettext_noop("That frame is not JSON."),
    gettext_noop("You are watching this match."),
)


def tile_label(tile: Any) -> str:
    """``[1|4]``, the rules' notation."""
    return f"[{int(tile[0])}|{int(tile[1])}]"


def tile_key(tile: Any) -> str:
    """``1-4``, as used in ``data-tile``."""
    return f"{int(tile[0])}-{int(tile[1])}"


def points_and_chips(points: int) -> str:
    """``150 pts (30 chips)`` / ``150点 (30チップ)``."""
    return _("%(points)s pts (%(chips)s chips)") % {"points": points, "chips": points // CHIP}


def side_label(side: str) -> str:
    return {
        "low": _("low end"),
        "high": _("high end"),
        "straight_a": _("straight side A"),
        "straight_b": _("straight side B"),
        "branch_a": _("branch A"),
        "branch_b": _("branch B"),
    }.get(side, side)


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


def clock_ms(ms: int) -> str:
    """``1:54`` (and tenths under ten seconds, ``0:09.4``); JS keeps it counting."""
    ms = max(0, int(ms))
    if ms < 10_000:
        return f"0:{ms // 1000:02d}.{(ms % 1000) // 100}"
    s = -(-ms // 1000)
    return f"{s // 60}:{s % 60:02d}"


def countdown(
    deadline: int | None, server_now: int | None, testid: str, *, sync: bool = False
) -> SafeString | None:
    """A seconds countdown to an epoch-ms ``deadline`` that match.js keeps running.

    With ``sync`` the page asks for a fresh view once it has run out (nothing
    else is pushed when, say, a rematch offer lapses).
    """
    if deadline is None:
        return None
    secs: int | str = "" if server_now is None else max(0, -(-(deadline - server_now) // 1000))
    return format_html(
        '<b class="countdown" data-countdown data-deadline="{}" data-server-now="{}"'
        ' data-testid="{}"{}>{}</b>',
        deadline,
        "" if server_now is None else server_now,
        testid,
        mark_safe(" data-sync-at-zero") if sync else "",
        secs,
    )


def _seat_of(view: dict[str, Any]) -> tuple[int, bool]:
    """The seat drawn at the bottom, and whether it is a player's own view (it holds a hand)."""
    seat = view.get("seat")
    if seat in (0, 1):
        return seat, True
    you = view.get("match", {}).get("you")
    return (you if you in (0, 1) else 0), False


def _computer_label(m: dict[str, Any], seat: int) -> str | None:
    """``🤖 中級`` at the seat the site's computer plays, else ``None``."""
    from accounts.models import COMPUTER_LEVELS

    c = m.get("computer")
    if not c or c.get("seat") != seat:
        return None
    return f"🤖 {COMPUTER_LEVELS.get(c.get('level'), '')}"


def _players(view: dict[str, Any], me: int) -> list[dict[str, Any]]:
    m = view["match"]
    names = m.get("names") or ["", ""]
    balances = view.get("balances")
    sizes = view.get("hand_sizes")
    clocks = view.get("clocks") or {}
    main = clocks.get("main")
    running = clocks.get("running")
    ready = m.get("ready") or [False, False]
    ratings = m.get("ratings") or [None, None]
    out = []
    for s in (0, 1):
        rating = ratings[s] if s < len(ratings) else None
        bal = None if balances is None else balances[s]
        is_running = running == s
        delay_left = clocks.get("delay_left", 0) if is_running else 0
        out.append(
            {
                "seat": s,
                "name": names[s] or _("Player %(n)s") % {"n": s + 1},
                # "1520?" while provisional; a same-device guest has none.
                "rating": rating.get("display") if isinstance(rating, dict) else None,
                "bot": bool((m.get("bots") or [False, False])[s]),
                "computer": _computer_label(m, s),
                "is_me": s == me,
                "balance": bal,
                "balance_text": None if bal is None else points_and_chips(bal),
                "chips": None if bal is None else bal // CHIP,
                "tiles": None if sizes is None else sizes[s],
                "tiles_text": None
                if sizes is None
                else ngettext("%(n)s tile", "%(n)s tiles", sizes[s]) % {"n": sizes[s]},
                "backs": range(min(sizes[s], 12)) if sizes is not None else range(0),
                "jockey": view.get("jockey") == s,
                "to_act": view.get("to_act") == s and view.get("phase") in ("auction", "play"),
                "ready": bool(ready[s]),
                "clock": None
                if main is None
                else {
                    "main": main[s],
                    "main_text": clock_ms(main[s]),
                    "running": is_running,
                    "delay_left": delay_left,
                    "delay_text": str(-(-delay_left // 1000)),
                    "server_now": clocks.get("server_now"),
                },
            }
        )
    return out


OUTAGE_NOTICE_MS = 60_000  # how long the page says an outage was given back


def _outage(view: dict[str, Any], players: list[dict[str, Any]], server_now: Any) -> str | None:
    """What the page says after the server was unreachable and the time was given back."""
    credit = view["match"].get("credit")
    if not credit or server_now is None or server_now - credit.get("to", 0) > OUTAGE_NOTICE_MS:
        return None
    seconds = max(1, round(credit.get("ms", 0) / 1000))
    seat = credit.get("seat")
    if seat in (0, 1):
        return _(
            "The server could not be reached for %(s)s s: that time was given back to "
            "%(name)s's clock. Nobody is charged for our outage."
        ) % {"s": seconds, "name": players[seat]["name"]}
    return _(
        "The server could not be reached for %(s)s s: the waiting time was extended by it."
    ) % {"s": seconds}


def _status(view: dict[str, Any], me: int, own: bool, players: list[dict[str, Any]]) -> str:
    m = view["match"]
    phase = view.get("phase")
    status = m.get("status")
    to_act = view.get("to_act")
    if status == "waiting":
        return _("Waiting for both players to press Start")
    if status == "voided":
        return _("This match was voided.")
    if status == "aborted" or phase == "match_over" or status == "finished":
        return _("The match is over")
    if phase == "hand_over":
        return _("Hand %(n)s is over") % {"n": (view.get("hand_no") or 0) + 1}
    if view.get("awaiting_reveal") and to_act is not None:
        return _("%(name)s's turn: hand over the device") % {"name": players[to_act]["name"]}
    if to_act is None:
        return ""
    mine = own and to_act == me
    if phase == "auction":
        if mine:
            return _("Your turn: the auction for the opening")
        return _("%(name)s is deciding in the auction") % {"name": players[to_act]["name"]}
    if mine:
        if view.get("must_place"):
            return _("Your turn: place the tile you drew")
        if not view.get("layout"):
            return _("Your turn: open with any tile")
        return _("Your turn")
    return _("%(name)s's turn") % {"name": players[to_act]["name"]}


@_in_language
def board_fragment(view: dict[str, Any], *, oob: bool) -> str:
    """The board's fragment: the same for every audience of a version, so drawn once.

    It depends only on the layout, its legal positions and counted ends, and the
    phase (an empty table's text); a move that places no tile (an auction step,
    say) reuses the last drawing.
    """
    phase = view.get("phase")
    layout = view.get("layout")
    key = json.dumps(
        [layout, view.get("legal"), view.get("ends"), view.get("end_total")],
        separators=(",", ":"),
    )
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
            names = view["match"].get("names") or ["", ""]
            return seat_name(names, ev.get("player")) or None, int(ev["score"])
    return None, 0


@functools.lru_cache(maxsize=512)
def _board_fragment(
    key: str, phase: str | None, language: str, oob: bool, scorer: str | None, score: int
) -> str:
    layout, legal, ends, end_total = json.loads(key)
    view = {"layout": layout, "legal": legal, "ends": ends, "end_total": end_total}
    g = _board(view)
    if g is not None and scorer is not None:
        g["scored"] = _("%(name)s scores %(n)s") % {"name": scorer, "n": score}
    return _render(
        "board.html",
        {"board": g, "phase": phase, "oob_attr": OOB if oob else "", "_": _translator(language)},
    )


def _board(view: dict[str, Any]) -> dict[str, Any] | None:
    layout = view.get("layout")
    if layout is None:
        return None
    g = board.geometry(layout, view.get("legal"), view.get("ends"))
    spinner = _("spinner")
    # Each tile's drawing is made once: a tile keeps its place as the layout grows.
    g["tiles_svg"] = Markup("".join(  # noqa: S704 - numbers and escaped labels only
        _board_tile(t["key"], t["x"], t["y"], t["w"], t["h"], tuple(t["line"]),
                    tuple(t["pips"]), t["spinner"], t["last"], spinner)
        for t in g["tiles"]
    ))  # fmt: skip
    g["positions_svg"] = Markup("".join(_board_position(p) for p in g["positions"]))  # noqa: S704
    ends = view.get("ends") or []
    g["ends_sum"] = " + ".join(str(e["value"]) for e in ends) or "0"
    g["end_total"] = view.get("end_total", 0)
    g["scored"] = None
    return g


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
        f' data-value="{p["value"]}" data-count="{count}" role="button" aria-disabled="true"'
        f' aria-label="{label}"><title>{label}: {counts}</title>'
        f'<circle class="pos__hit" cx="{cx}" cy="{cy}" r="14"/>'
        f'<circle class="pos__ring" cx="{cx}" cy="{cy}" r="11.5"/>'
        f'<circle class="pos__dot" cx="{cx}" cy="{cy}" r="9"/>'
        f'<text class="pos__num" x="{cx}" y="{cy}" dy="0.36em">{count}</text></g>'
    )


def _hand(view: dict[str, Any]) -> dict[str, Any] | None:
    if "hand" not in view:
        return None
    playable: dict[str, list[str]] = {}
    for p in view.get("playable") or []:
        keys = ["open" if a is None else board.pos_key(a["tile"], a["side"]) for a in p["at"]]
        playable[tile_key(p["tile"])] = keys
    must = view.get("must_place")
    my_turn = bool(view.get("my_turn")) and view.get("phase") == "play"
    tiles = []
    for t in view["hand"]:
        d = domino(t)
        at = playable.get(d["key"])
        d["playable"] = at is not None
        d["at"] = " ".join(at or [])
        d["dim"] = my_turn and at is None
        d["drawn"] = must is not None and tile_key(must) == d["key"]
        tiles.append(d)
    n = len(tiles)
    return {
        "tiles": tiles,
        "count_text": ngettext("%(n)s tile", "%(n)s tiles", n) % {"n": n},
        "my_turn": my_turn,
        "pips": sum(int(a) + int(b) for a, b in view["hand"]),
        "must_place": None if must is None else tile_label(must),
    }


def _auction(view: dict[str, Any], players: list[dict[str, Any]]) -> dict[str, Any] | None:
    if view.get("phase") != "auction":
        return None
    bid = view.get("bid")
    jockey = view.get("jockey")
    a = view.get("auction")
    out: dict[str, Any] = {
        "jockey": None if jockey is None else players[jockey]["name"],
        "bid": None
        if bid is None
        else {"name": players[bid["player"]]["name"], "amount": bid["amount"]},
        "to_act": None if view.get("to_act") is None else players[view["to_act"]]["name"],
        "mine": a is not None,
    }
    if a is not None:
        out.update(a)
        out["discount"] = a.get("discount", 0)
        out["can_bid"] = a.get("max_bid") is not None
        if bid is not None:
            out["accept_text"] = _("%(name)s pays %(cost)s") % {
                "name": players[bid["player"]]["name"],
                "cost": a.get("accept_cost"),
            }
    return out


# --- the event log --------------------------------------------------------------


def seat_name(names: list[str], seat: Any) -> str:
    """The name at ``seat``, or ``""`` where an event names no seat (0 or 1)."""
    return names[seat] if seat in (0, 1) else ""


def accept_args(ev: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """What a line about an ``accept`` event quotes (here and in history.replay)."""
    return {
        "name": seat_name(names, ev.get("player")),
        "amount": ev.get("amount"),
        "payer": seat_name(names, ev.get("payer")),
        "cost": ev.get("cost"),
    }


def _how_text(how: str | None) -> str:
    return {
        "balance": _("balance"),
        "time": _("time out"),
        "resign": _("resignation"),
        "abort": _("aborted"),
        "void": _("voided, no rating result"),
    }.get(how or "", how or "")


def event_text(ev: dict[str, Any], names: list[str]) -> str | None:
    """One line of the log, or ``None`` for events not worth a line."""
    kind = ev.get("type")
    name = seat_name(names, ev.get("player"))
    if kind == "place":
        ends = ev.get("ends") or []
        args = {
            "name": name,
            "tile": tile_label(ev["tile"]),
            "sum": "+".join(str(e["value"]) for e in ends) or "0",
            "total": ev.get("total", 0),
            "score": ev.get("score", 0),
        }
        total = args["total"]
        if total > 0 and total % 5 == 0:
            if args["score"] < total:
                return (
                    _("%(name)s: %(tile)s → ends %(sum)s = %(total)s, %(score)s points (capped)")
                    % args
                )
            return _("%(name)s: %(tile)s → ends %(sum)s = %(total)s, %(score)s points") % args
        return _("%(name)s: %(tile)s → ends %(sum)s = %(total)s") % args
    if kind == "draw":
        if "tile" in ev:
            return _("%(name)s drew %(tile)s") % {"name": name, "tile": tile_label(ev["tile"])}
        return _("%(name)s drew a tile") % {"name": name}
    if kind == "pass":
        return _("%(name)s passed") % {"name": name}
    if kind == "bid":
        return _("%(name)s bid %(amount)s") % {"name": name, "amount": ev.get("amount")}
    if kind == "accept":
        return _("%(name)s accepted %(amount)s: %(payer)s pays %(cost)s") % accept_args(ev, names)
    if kind == "decline":
        return _("%(name)s declined: the jockey opens free") % {"name": name}
    if kind == "hand_start":
        n = (ev.get("hand") or 0) + 1
        j = ev.get("jockey")
        if j in (0, 1):
            return _("Hand %(n)s dealt; %(jockey)s is the jockey, auction for the opening") % {
                "n": n,
                "jockey": names[j],
            }
        return _("Hand %(n)s dealt; forced opening") % {"n": n}
    if kind == "hand_end":
        if ev.get("how") == "domino":
            return _("%(name)s went out") % {"name": seat_name(names, ev.get("went_out"))}
        r = ev.get("receiver")
        pips = ev.get("pips") or [0, 0]
        if r not in (0, 1):
            return _("Block: %(a)s vs %(b)s pips, equal: nothing moves") % {
                "a": pips[0],
                "b": pips[1],
            }
        return _("Block: %(a)s vs %(b)s pips; %(name)s receives %(moved)s") % {
            "a": pips[0],
            "b": pips[1],
            "name": names[r],
            "moved": ev.get("moved", 0),
        }
    if kind == "match_end":
        return _("%(name)s wins (%(how)s)") % {
            "name": seat_name(names, ev.get("winner")),
            "how": _how_text(ev.get("how")),
        }
    if kind == "timeout":
        return _("%(name)s ran out of time") % {"name": name}
    if kind == "resign":
        return _("%(name)s resigned") % {"name": name}
    return None


def _log(view: dict[str, Any], players: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """This hand's events, newest first, and how the previous hand ended.

    Older hands' tiles are left out: they were dealt again, and a line about a
    past hand must not look like news about the current one.
    """
    names = [p["name"] for p in players]
    hand_no = view.get("hand_no")
    out: list[dict[str, Any]] = []
    draws: list[dict[str, Any]] = []  # the draws of the turn being read, in one line
    for ev in view.get("events") or []:
        if ev.get("hand") != hand_no and ev.get("type") not in ("hand_end", "match_end"):
            continue
        if ev.get("type") == "draw":
            if draws and draws[-1].get("player") != ev.get("player"):
                out.append(_draws_line(draws, names))
                draws = []
            draws.append(ev)
            continue
        if draws:
            out.append(_draws_line(draws, names))
            draws = []
        text = event_text(ev, names)
        if text is not None:
            out.append(_log_line(ev, text, hand_no))
    if draws:
        out.append(_draws_line(draws, names))
    out.reverse()
    return out


def _log_line(ev: dict[str, Any], text: str, hand_no: Any) -> dict[str, Any]:
    return {
        "seq": ev.get("seq"),
        "type": ev.get("type"),
        "text": text,
        "player": ev.get("player"),
        "score": ev.get("score") or 0,
        "old": ev.get("hand") != hand_no,
    }


def _draws_line(draws: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """One line for one player's draws in a row (a turn): the tiles only to their drawer."""
    last = draws[-1]
    name = seat_name(names, last.get("player"))
    tiles = [tile_label(ev["tile"]) for ev in draws if "tile" in ev]
    if len(draws) == 1:
        text = event_text(last, names) or ""
    elif len(tiles) == len(draws):
        text = _("%(name)s drew %(tile)s") % {"name": name, "tile": ", ".join(tiles)}
    else:
        text = _("%(name)s drew %(n)s tiles") % {"name": name, "n": len(draws)}
    return _log_line(last, text, last.get("hand"))


# --- the hand's settlement and the result ----------------------------------------


def _settlement(view: dict[str, Any], players: list[dict[str, Any]]) -> dict[str, Any] | None:
    st = view.get("settlement")
    if st is None or view.get("phase") not in ("hand_over", "match_over"):
        return None
    names = [p["name"] for p in players]
    pips = st.get("pips") or [0, 0]
    hands = [
        {
            "seat": s,
            "name": names[s],
            "tiles": [domino(t, vertical=True) for t in (st.get("hands") or [[], []])[s]],
            "pips": pips[s],
        }
        for s in (0, 1)
    ]
    lines = []
    if st.get("how") == "domino":
        lines.append(
            _("%(name)s went out (domino): the hand ends, no points for the pips left")
            % {"name": seat_name(names, st.get("went_out"))}
        )
    else:
        lines.append(_("Block: both passed. Pips: %(a)s %(pa)s, %(b)s %(pb)s") % {
            "a": names[0], "pa": pips[0], "b": names[1], "pb": pips[1],
        })  # fmt: skip
        r = st.get("receiver")
        if r not in (0, 1):
            lines.append(_("Equal totals: nothing moves"))
        else:
            payer = 1 - r
            lines.append(
                _("%(payer)s's %(pips)s rounds to %(owed)s; %(name)s receives it") % {
                    "payer": names[payer], "pips": pips[payer], "owed": st.get("owed", 0),
                    "name": names[r],
                }
            )  # fmt: skip
            if st.get("moved", 0) < st.get("owed", 0):
                lines.append(
                    _("%(payer)s had only %(moved)s: %(moved)s moves") % {
                        "payer": names[payer], "moved": st.get("moved", 0),
                    }
                )  # fmt: skip
    nj = st.get("next_jockey")
    if view.get("phase") == "hand_over":
        if nj in (0, 1):
            lines.append(
                _("%(name)s is the jockey next hand: auction for the opening") % {"name": names[nj]}
            )
        else:
            lines.append(_("Next hand: forced opening, no jockey"))
    bal = st.get("balances")
    return {
        "hand": (st.get("hand") or 0) + 1,
        "how": st.get("how"),
        "hands": hands,
        "lines": lines,
        "receiver": st.get("receiver"),
        "moved": st.get("moved", 0),
        "balances": None if bal is None else [points_and_chips(b) for b in bal],
    }


def _result(view: dict[str, Any], players: list[dict[str, Any]], me: int, own: bool) -> Any:
    m = view["match"]
    res = m.get("result")
    if res is None and view.get("phase") == "match_over":
        res = {"winner": view.get("winner"), "end": view.get("end")}
    if res is None:
        return None
    w, end = res.get("winner"), res.get("end")
    names = [p["name"] for p in players]
    if w in (0, 1):
        loser = names[1 - w]
        reason = {
            "balance": _("%(name)s's balance reached 0"),
            "time": _("%(name)s ran out of time"),
            "resign": _("%(name)s resigned"),
        }.get(end or "", "%(name)s") % {"name": loser}
        headline = _("%(name)s wins") % {"name": names[w]}
        if own and m.get("kind") != "same_device":
            headline = _("You win") if w == me else _("You lose")
    elif end == "void" or m.get("status") == "voided":
        # 中止 (レーティング結果なし); the stored reason is English source text, shown translated.
        headline = _("Match voided (no rating result)")
        source = m.get("void_reason") or res.get("reason")
        reason = _(source) if source else _("Voided after a service fault: no rating result")
    else:
        headline = _("Match cancelled")
        reason = _("Aborted before the first decision: no winner, no rating change")
    return {"winner": w, "end": end, "how": _how_text(end), "headline": headline,
            "reason": reason, "ratings": _rating_changes(m, players),
            "unrated": fairplay.reason_text(res.get("unrated_reason"))}  # fmt: skip


def _rating_changes(m: dict[str, Any], players: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each rated seat's change once a ranked match is settled (``rating_delta``), else none."""
    delta = m.get("rating_delta") or []
    ratings = m.get("ratings") or []
    out = []
    for s, d in enumerate(delta[:2]):
        if d is None:
            continue
        r = ratings[s] if s < len(ratings) and isinstance(ratings[s], dict) else {}
        before = r.get("value")
        out.append(
            {
                "seat": s,
                "name": players[s]["name"],
                "delta": int(d),
                "delta_text": f"+{d}" if d > 0 else f"\u2212{-d}" if d < 0 else "±0",
                "before": r.get("display"),
                "after": None if before is None else int(before) + int(d),
            }
        )
    return out


# --- after the match: rematch, replay, history ------------------------------------

OVER = ("finished", "aborted", "voided")
# A rematch is offered after a finished or voided match: both were played by two
# present players (a void is the service's fault, so playing again is the remedy).
# An aborted match never started (someone did not press Start or never moved), so
# the page offers none; an offer made there anyway (the JSON API) is still shown
# and can be answered.
REMATCH_OFFERED_AFTER = ("finished", "voided")


def _rematch(view: dict[str, Any], me: int, server_now: Any) -> dict[str, Any] | None:
    """The result panel's rematch part, from ``view["match"]["rematch"]`` (matches/rematch.py)."""
    m = view["match"]
    rb = m.get("rematch")
    status = m.get("status")
    if not rb or status not in OVER:
        return None
    st = rb.get("status") or "none"
    if status not in REMATCH_OFFERED_AFTER and st == "none":
        return None
    same_device = m.get("kind") == "same_device"
    offerable = status in REMATCH_OFFERED_AFTER
    by = rb.get("offered_by")
    mine = not same_device and by == me
    new = rb.get("new_match")
    out: dict[str, Any] = {
        "status": st,
        "offered_by": by,
        "mine": mine,
        "ranked": m.get("kind") == "ranked",
        "can_offer": False,
        "can_answer": False,
        "text": None,
        "countdown": None,
        "goto": None if new is None else reverse("matches:match", args=[int(new)]),
        "accept_label": pgettext("rematch", "Accept"),
        "decline_label": pgettext("rematch", "Decline"),
    }
    if new is not None or st == "accepted":
        out["text"] = _("Rematch accepted: on to the new match…")
    elif same_device:
        out["can_offer"] = offerable
    elif st == "open":
        out["countdown"] = countdown(
            rb.get("expires_at"), server_now, "rematch-countdown", sync=True
        )
        if mine:
            out["text"] = _("You offered a rematch. Waiting for your opponent…")
        else:
            out["text"] = _("Your opponent offers a rematch.")
            out["can_answer"] = True
    elif st == "declined" or rb.get("declined"):
        if mine:
            out["text"] = _("Your opponent declined the rematch.")
        else:
            out["text"] = _("You declined the rematch.")
    else:
        out["can_offer"] = offerable
        if st == "expired":
            out["text"] = _("The rematch offer has lapsed.")
        elif st == "withdrawn":
            out["text"] = _("The rematch offer was withdrawn.")
    return out


def _after_links(view: dict[str, Any], me: int) -> dict[str, Any] | None:
    """Where to go from a match that is over: its replay and the player's match history."""
    m = view["match"]
    if m.get("status") not in OVER or m.get("id") is None:
        return None
    names = m.get("names") or ["", ""]
    # At a same-device match the account is seat 0's (the other seat is a guest).
    you = m.get("you")
    seat = 0 if m.get("kind") == "same_device" or you not in (0, 1) else you
    username = names[seat] if seat < len(names) else ""
    return {
        "replay": reverse("history:replay", args=[int(m["id"])]),
        "history": reverse("history:matches", args=[username]) if username else None,
    }


def _overlay(view: dict[str, Any], players: list[dict[str, Any]], server_now: Any) -> Any:
    m = view["match"]
    watching = bool(m.get("watching"))
    if m.get("status") == "waiting":
        you = m.get("you")
        same_device = m.get("kind") == "same_device"
        if same_device:
            can_start = not watching and not all(p["ready"] for p in players)
        else:
            can_start = you in (0, 1) and not players[you]["ready"]
        return {
            "kind": "start",
            "players": players,
            # One device holds both seats: one press of Start starts both.
            "same_device": same_device,
            "watching": watching,
            "can_start": can_start,
            "time_control": _time_control(),
            "countdown": countdown(m.get("ready_deadline"), server_now, "start-countdown"),
            # What makes a ranked match rated, and what leaving before Start costs.
            "rated_rule": fairplay.rule_text() if m.get("kind") == "ranked" else "",
        }
    if view.get("awaiting_reveal") and m.get("status") == "live" and not watching:
        to_act = view.get("to_act")
        if to_act in (0, 1):
            # (A forced opening never waits here: the server plays it, hand-off and all.)
            return {"kind": "handoff", "name": players[to_act]["name"], "seat": to_act}
    return None


def _time_control() -> dict[str, Any]:
    """The match clock for the start screen (RULES §7), from settings (no database)."""
    from .services import match_clock  # the bottom of matches/: imported when first needed

    clock = match_clock()
    minutes = f"{clock.main_ms / 60_000:.1f}".removesuffix(".0")
    return {"main_min": minutes, "main_s": clock.main_ms // 1000, "delay_s": clock.delay_ms // 1000}


@_in_language
def build(view: dict[str, Any]) -> dict[str, Any]:
    """Everything the match templates need, derived from ``view`` alone."""
    m = view["match"]
    me, own = _seat_of(view)
    opp = 1 - me
    players = _players(view, me)
    phase = view.get("phase")
    live = m.get("status") == "live" and phase in ("auction", "play", "hand_over")
    clocks = view.get("clocks") or {}
    server_now = clocks.get("server_now") or m.get("server_now")
    result = _result(view, players, me, own)
    watching = bool(m.get("watching"))
    kind = m.get("kind")
    ctx = {
        "_": _translator(translation.get_language() or ""),
        "view": view,
        "match": m,
        "version": m.get("version", 0),
        "phase": phase,
        "me": players[me],
        "opp": players[opp],
        "players": players,
        "own": own,
        "watching": watching,
        "kind": kind,
        "kind_label": _kind_label(kind),
        "same_device": kind == "same_device",
        "status_text": _status(view, me, own, players),
        "outage": _outage(view, players, server_now),
        "hand_no": None if view.get("hand_no") is None else view["hand_no"] + 1,
        "talon": view.get("talon"),
        "hand": _hand(view),
        "auction": _auction(view, players),
        "log": _log(view, players),
        "settlement": _settlement(view, players),
        "result": result,
        "rematch": None if result is None else _rematch(view, me, server_now),
        "after": _after_links(view, me),
        "overlay": _overlay(view, players, server_now),
        # Resigning is always allowed while the match runs (RULES §1), even between hands.
        "can_resign": own and live,
        "cont": None,
        "server_now": server_now,
        "my_turn": bool(view.get("my_turn")),
    }
    if phase == "hand_over" and m.get("status") == "live":
        ready = m.get("ready") or [False, False]
        ctx["cont"] = {
            "ready": [{"name": players[s]["name"], "ready": bool(ready[s])} for s in (0, 1)],
            # A spectator sees who is ready, and no button.
            "can_press": not watching,
            "pressed": own and bool(ready[me]) and m.get("kind") != "same_device",
            "countdown": countdown(m.get("ready_deadline"), server_now, "continue-countdown"),
        }
    return ctx


def _kind_label(kind: str | None) -> str:
    return {
        "ranked": _("Ranked"),
        "casual": _("Casual"),
        "same_device": _("Same device"),
    }.get(kind or "", "")


@_in_language
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
    ctx["frags"]["toast"] = mark_safe(_render("toast.html", {"oob_attr": ""}))  # noqa: S308
    return ctx


def render_fragments(view: dict[str, Any], *, language: str | None = None) -> str:
    """The fragments for htmx's ws extension, in the active language (or ``language``)."""
    if language is not None:
        from django.utils import translation

        with translation.override(language):
            return render_fragments(view)
    return render_changed(view, {})


@_in_language
def render_changed(view: dict[str, Any], sent: dict[str, str]) -> str:
    """The fragments of ``view`` that differ from those in ``sent`` (which is updated).

    A socket keeps what it last sent of each part of the page, so a move sends
    the board, the hand and the clocks, not the unchanged auction panel or log.
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
    return _render(template, ctx)


@_in_language
def render_error(code: str, message: str) -> str:
    """A toast for an error frame; it replaces the previous toast and fades by itself."""
    return _render("toast.html", {"code": code, "message": message, "oob_attr": OOB})
