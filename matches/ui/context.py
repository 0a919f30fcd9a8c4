"""The context of the match templates, derived from one seat's view alone.

Everything rendered comes from the view dict and nothing else, so nothing a seat
may not see can reach its page: the opponent's tiles appear only in a hand's
settlement, where the view reveals them.
"""

from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.translation import ngettext

from accounts.display import rating_text
from matches.ui.board_svg import domino
from matches.ui.i18n import _, in_language, translator
from matches.ui.results import (
    after_links,
    rated_rule,
    rematch_panel,
    result_panel,
    settlement_panel,
)
from matches.ui.text import (
    CHIP,
    clock_ms,
    countdown,
    kind_label,
    log_lines,
    points_and_chips,
    shown_name,
    tile_key,
    tile_label,
    time_control,
)
from table import geometry as board


def _seat_of(view: dict[str, Any]) -> tuple[int, bool]:
    """The seat drawn at the bottom, and whether it is a player's own view (it holds a hand)."""
    seat = view.get("seat")
    if seat in (0, 1):
        return seat, True
    you = view.get("match", {}).get("you")
    return (you if you in (0, 1) else 0), False


def _computer_label(m: dict[str, Any], seat: int) -> str | None:
    """``🤖`` at the seat the site's computer plays (its level is in its name), else ``None``."""
    c = m.get("computer")
    if not c or c.get("seat") != seat:
        return None
    return "🤖"


def _rating_now(rating: Any, delta: Any) -> str | None:
    """The rating shown by a seat's name: the match's starting one, plus its settled change."""
    if not isinstance(rating, dict):
        return None
    display = str(rating.get("display") or "")
    if delta is None or rating.get("value") is None:
        return rating_text(display)
    after = int(rating["value"]) + int(delta)
    return rating_text(f"{after}?" if display.endswith("?") else str(after))


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
                "name": shown_name(m, s, names[s]),
                # 1520（暫定） while provisional; a same-device guest has none. Once a ranked
                # result is settled, the new rating (the bars must not show the old one).
                "rating": _rating_now(rating, (m.get("rating_delta") or [None, None])[s]),
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
    name = {"name": players[to_act]["name"]}
    if mine and m.get("kind") == "same_device":
        # Two people share the screen: "your" turn would say whose to neither.
        if phase == "auction":
            return _("%(name)s's turn: the auction for the opening") % name
        if view.get("must_place"):
            return _("%(name)s's turn: place the tile you drew") % name
        if not view.get("layout"):
            return _("%(name)s's turn: open with any tile") % name
        return _("%(name)s's turn") % name
    if phase == "auction":
        if mine:
            return _("Your turn: the auction for the opening")
        return _("%(name)s is deciding in the auction") % name
    if mine:
        if view.get("must_place"):
            return _("Your turn: place the tile you drew")
        if not view.get("layout"):
            return _("Your turn: open with any tile")
        return _("Your turn")
    return _("%(name)s's turn") % name


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
        "opening": _opening(view, tiles) if my_turn else None,
    }


def _opening(view: dict[str, Any], tiles: list[dict[str, Any]]) -> str | None:
    """On the opener's own screen: ``"free"`` when any tile may open (after an auction),
    the one tile's label when the opening is forced, ``None`` once the table has tiles."""
    if view.get("layout"):
        return None
    playable = [t for t in tiles if t["playable"]]
    if len(playable) == 1 and len(tiles) > 1:
        return str(playable[0]["label"])
    return "free"


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
        # What each amount costs if accepted (the engine's arithmetic), for match.js.
        out["costs_attr"] = " ".join(f"{c['amount']}:{c['cost']}" for c in a.get("costs") or [])
        if bid is not None:
            out["accept_text"] = _("%(name)s pays %(cost)s") % {
                "name": players[bid["player"]]["name"],
                "cost": a.get("accept_cost"),
            }
    return out


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
            "time_control": time_control(),
            "countdown": countdown(m.get("ready_deadline"), server_now, "start-countdown"),
            # What makes a ranked match rated, and what leaving before Start costs.
            "rated_rule": rated_rule() if m.get("kind") == "ranked" else "",
        }
    if view.get("awaiting_reveal") and m.get("status") == "live" and not watching:
        to_act = view.get("to_act")
        if to_act in (0, 1):
            # (A forced opening never waits here: the server plays it, hand-off and all.)
            return {"kind": "handoff", "name": players[to_act]["name"], "seat": to_act}
    return None


@in_language
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
    result = result_panel(view, players, me, own)
    watching = bool(m.get("watching"))
    kind = m.get("kind")
    ctx = {
        "_": translator(translation.get_language() or ""),
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
        "kind_label": kind_label(kind),
        "same_device": kind == "same_device",
        "status_text": _status(view, me, own, players),
        "outage": _outage(view, players, server_now),
        "hand_no": None if view.get("hand_no") is None else view["hand_no"] + 1,
        "talon": view.get("talon"),
        "hand": _hand(view),
        "auction": _auction(view, players),
        "log": log_lines(view, players),
        "settlement": settlement_panel(view, players),
        "result": result,
        "rematch": None if result is None else rematch_panel(view, me, server_now),
        "after": after_links(view, me),
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
