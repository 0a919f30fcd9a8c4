"""The words of the game, once: labels, times, and the narration of events.

Shared by the live match's log, the replay (``history.replay``) and the rules
page (``rules.examples``).
"""

from __future__ import annotations

from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_noop

import engine
from matches import conf
from matches.ui.i18n import _

CHIP = 5  # points per chip (RULES §1)


# Translated elsewhere through a wrapper makemessages cannot see (the consumers'
# ``self._t``, matches/realtime/match_consumer.py and lobby_consumer.py); listed here so
# that the catalogue has them.
_ELSEWHERE = (
    gettext_noop("That frame is not understood."),
    gettext_noop("Frames are JSON text."),
    gettext_noop("That frame is too large."),
    gettext_noop("That frame is not JSON."),
    gettext_noop("You are watching this match."),
)


def tile_label(tile: Any) -> str:
    """``[1|4]``, the rules' notation (``""`` for no tile)."""
    if tile is None:
        return ""
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


def clock_ms(ms: int) -> str:
    """``1:54`` (and tenths under ten seconds, ``0:09.4``); JS keeps it counting."""
    ms = max(0, int(ms))
    if ms < 10_000:
        return f"0:{ms // 1000:02d}.{(ms % 1000) // 100}"
    s = -(-ms // 1000)
    return f"{s // 60}:{s % 60:02d}"


def time_control() -> dict[str, Any]:
    """The match clock as pages state it (RULES §7): main time in min and s, the delay in s.

    The one place it is formatted: the lobby, an invite, the start screen and the rules.
    """
    clock = conf.match_clock()
    main_s = clock.main_ms // 1000
    return {
        "main_s": main_s,
        "main_min": main_s // 60 if main_s % 60 == 0 else round(main_s / 60, 1),
        "delay_s": clock.delay_ms // 1000,
    }


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


def kind_label(kind: str | None) -> str:
    return {
        "ranked": _("Ranked"),
        "casual": _("Casual"),
        "same_device": _("Same device"),
    }.get(kind or "", "")


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


def how_text(how: str | None) -> str:
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
        scored = engine.points_for(args["total"])
        if scored:
            if args["score"] < scored:
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
            "how": how_text(ev.get("how")),
        }
    if kind == "timeout":
        return _("%(name)s ran out of time") % {"name": name}
    if kind == "resign":
        return _("%(name)s resigned") % {"name": name}
    return None


def log_lines(view: dict[str, Any], players: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


# --- the replay's steps: each event in a full sentence ---------------------------


def draw_sentence(player: Any, tiles: Any, names: list[str]) -> str:
    """The replay's sentence for one player's draws in a row."""
    return _("%(name)s draws %(tile)s from the talon.") % {
        "name": seat_name(names, player),
        "tile": ", ".join(tile_label(t) for t in tiles),
    }


def describe(ev: dict[str, Any], names: list[str]) -> str:
    """One event in a full sentence, for the replay's steps (the log's line: :func:`event_text`)."""
    kind = ev.get("type", "")
    p = ev.get("player")
    name = seat_name(names, p)
    other = seat_name(names, 1 - p) if p in (0, 1) else ""
    if kind == "hand_start":
        n = int(ev.get("hand", 0)) + 1
        jockey = ev.get("jockey")
        if jockey in (0, 1):
            return _("Hand %(n)s dealt; %(jockey)s is the jockey: auction for the opening.") % {
                "n": n,
                "jockey": names[jockey],
            }
        return _("Hand %(n)s dealt; forced opening.") % {"n": n}
    if kind == "place":
        params = {"name": name, "tile": tile_label(ev.get("tile")), "score": ev.get("score", 0)}
        at = ev.get("at")
        if at is None:
            text = _("%(name)s opens with %(tile)s.") % params
        else:
            params.update(on=tile_label(at.get("tile")), side=side_label(at.get("side", "")))
            text = _("%(name)s places %(tile)s on %(on)s, %(side)s.") % params
        if ev.get("score"):
            text += " " + _("Ends total %(total)s: %(score)s points.") % {
                "total": ev.get("total"),
                "score": ev.get("score"),
            }
        return text
    if kind == "draw":
        return _("%(name)s draws %(tile)s from the talon.") % {
            "name": name,
            "tile": tile_label(ev.get("tile")),
        }
    if kind == "pass":
        return _("%(name)s passes.") % {"name": name}
    if kind == "bid":
        return _("%(name)s bids %(amount)s.") % {"name": name, "amount": ev.get("amount")}
    if kind == "accept":
        return _(
            "%(name)s accepts the bid of %(amount)s: %(payer)s pays %(cost)s and opens."
        ) % accept_args(ev, names)
    if kind == "decline":
        return _("%(name)s declines: %(jockey)s (the jockey) opens.") % {
            "name": name,
            "jockey": other,
        }
    if kind == "resign":
        return _("%(name)s resigns.") % {"name": name}
    if kind == "timeout":
        return _("%(name)s runs out of time.") % {"name": name}
    if kind == "hand_end":
        if ev.get("how") == "domino":
            return _("%(name)s goes out and will be the jockey.") % {
                "name": seat_name(names, ev.get("went_out"))
            }
        receiver = ev.get("receiver")
        if receiver not in (0, 1):
            return _("Block: equal pips, nothing moves.")
        return _("Block: %(name)s has fewer pips and receives %(moved)s.") % {
            "name": names[receiver],
            "moved": ev.get("moved"),
        }
    if kind == "match_end":
        return _("%(name)s wins the match.") % {"name": seat_name(names, ev.get("winner"))}
    if kind == "aborted":
        return _("Aborted before the first move: no result.")
    if kind in ("voided", "void"):
        return _("Voided after a service fault: no result, no rating change.")
    return kind
