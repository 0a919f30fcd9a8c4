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

import functools
import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext, pgettext
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from . import board

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


@functools.cache
def _jinja() -> Environment:
    env = Environment(
        loader=FileSystemLoader(LIVE_TEMPLATES),
        autoescape=True,
        auto_reload=bool(settings.DEBUG),
        keep_trailing_newline=False,
    )
    env.globals["_"] = _translate
    return env


def _render(template: str, ctx: dict[str, Any]) -> str:
    return _jinja().get_template(template).render(ctx)


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


def _players(view: dict[str, Any], me: int) -> list[dict[str, Any]]:
    m = view["match"]
    names = m.get("names") or ["", ""]
    balances = view.get("balances")
    sizes = view.get("hand_sizes")
    clocks = view.get("clocks") or {}
    main = clocks.get("main")
    running = clocks.get("running")
    ready = m.get("ready") or [False, False]
    out = []
    for s in (0, 1):
        bal = None if balances is None else balances[s]
        is_running = running == s
        delay_left = clocks.get("delay_left", 0) if is_running else 0
        out.append(
            {
                "seat": s,
                "name": names[s] or _("Player %(n)s") % {"n": s + 1},
                "bot": bool((m.get("bots") or [False, False])[s]),
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


def board_fragment(view: dict[str, Any], *, oob: bool) -> str:
    """The board's fragment: the same for every audience of a version, so drawn once.

    It depends only on the layout, its legal positions and counted ends, and the
    phase (an empty table's text); a move that places no tile (an auction step,
    say) reuses the last drawing.
    """
    phase = view.get("phase")
    key = json.dumps(
        [view.get("layout"), view.get("legal"), view.get("ends"), view.get("end_total")],
        separators=(",", ":"),
    )
    return _board_fragment(key, phase, translation.get_language(), oob)


@functools.lru_cache(maxsize=512)
def _board_fragment(key: str, phase: str | None, language: str, oob: bool) -> str:
    layout, legal, ends, end_total = json.loads(key)
    view = {"layout": layout, "legal": legal, "ends": ends, "end_total": end_total}
    return _render("board.html", {"board": _board(view), "phase": phase, "oob": oob})


def _board(view: dict[str, Any]) -> dict[str, Any] | None:
    layout = view.get("layout")
    if layout is None:
        return None
    g = board.geometry(layout, view.get("legal"), view.get("ends"))
    for t in g["tiles"]:
        t["label"] = tile_label(t["tile"])
        t["pips_svg"] = pips_svg(t["pips"], 2.4)
    for p in g["positions"]:
        p["label"] = f"{tile_label(p['tile'])} {side_label(p['side'])}"
    ends = view.get("ends") or []
    g["ends_sum"] = " + ".join(str(e["value"]) for e in ends) or "0"
    g["end_total"] = view.get("end_total", 0)
    g["scores"] = g["end_total"] > 0 and g["end_total"] % 5 == 0
    return g


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
    out = []
    for ev in view.get("events") or []:
        if ev.get("hand") != hand_no and ev.get("type") not in ("hand_end", "match_end"):
            continue
        text = event_text(ev, names)
        if text is None:
            continue
        out.append(
            {
                "seq": ev.get("seq"),
                "type": ev.get("type"),
                "text": text,
                "player": ev.get("player"),
                "score": ev.get("score") or 0,
                "old": ev.get("hand") != hand_no,
            }
        )
    out.reverse()
    return out


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
            "reason": reason}  # fmt: skip


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
    if m.get("status") == "waiting":
        you = m.get("you")
        if m.get("kind") == "same_device":
            can_start = not all(p["ready"] for p in players)
        else:
            can_start = you in (0, 1) and not players[you]["ready"]
        return {
            "kind": "start",
            "players": players,
            "can_start": can_start,
            "countdown": countdown(m.get("ready_deadline"), server_now, "start-countdown"),
        }
    if view.get("awaiting_reveal") and m.get("status") == "live":
        to_act = view.get("to_act")
        if to_act in (0, 1):
            return {"kind": "handoff", "name": players[to_act]["name"], "seat": to_act}
    return None


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
    ctx = {
        "view": view,
        "match": m,
        "version": m.get("version", 0),
        "phase": phase,
        "me": players[me],
        "opp": players[opp],
        "players": players,
        "own": own,
        "same_device": m.get("kind") == "same_device",
        "status_text": _status(view, me, own, players),
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
            "pressed": own and bool(ready[me]) and m.get("kind") != "same_device",
            "countdown": countdown(m.get("ready_deadline"), server_now, "continue-countdown"),
        }
    return ctx


def page_context(view: dict[str, Any]) -> dict[str, Any]:
    """The context of ``matches/match.html``: the whole page for ``view``.

    ``frags`` holds each fragment's HTML (``frags.status``, ``frags.board``, …),
    rendered as the socket renders them but without ``hx-swap-oob``.
    """
    ctx = build(view)
    ctx["oob"] = False
    ctx["frags"] = {
        fid.removeprefix("sb-"): mark_safe(_fragment(fid, t, view, ctx))  # noqa: S308
        for fid, t in FRAGMENTS
    }
    ctx["frags"]["toast"] = mark_safe(_render("toast.html", {"oob": False}))  # noqa: S308
    return ctx


def render_fragments(view: dict[str, Any], *, language: str | None = None) -> str:
    """The fragments for htmx's ws extension, in the active language (or ``language``)."""
    if language is not None:
        from django.utils import translation

        with translation.override(language):
            return render_fragments(view)
    return render_changed(view, {})


def render_changed(view: dict[str, Any], sent: dict[str, str]) -> str:
    """The fragments of ``view`` that differ from those in ``sent`` (which is updated).

    A socket keeps what it last sent of each part of the page, so a move sends
    the board, the hand and the clocks, not the unchanged auction panel or log.
    """
    ctx = build(view)
    ctx["oob"] = True
    out = []
    for fid, template in FRAGMENTS:
        html = _fragment(fid, template, view, ctx)
        if sent.get(fid) != html:
            sent[fid] = html
            out.append(html)
    return "".join(out)


def _fragment(fid: str, template: str, view: dict[str, Any], ctx: dict[str, Any]) -> str:
    if fid == "sb-board":
        return board_fragment(view, oob=ctx["oob"])
    return _render(template, ctx)


def render_error(code: str, message: str) -> str:
    """A toast for an error frame; it replaces the previous toast and fades by itself."""
    return _render("toast.html", {"code": code, "message": message, "oob": True})
