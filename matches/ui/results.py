"""After a hand and after the match: the settlement, the result, the rematch panel, the links."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_noop, pgettext

from accounts.display import rating_text
from matches import conf
from matches.ui.board_svg import domino
from matches.ui.i18n import _
from matches.ui.text import countdown, how_text, points_and_chips, seat_name

# The result card's sentence for a ranked match that was not rated (the view's
# ``match.result.unrated_reason``, decided by matches.play.fairplay); ``casual``,
# ``aborted`` and ``void`` need none (the headline says it).
_UNRATED = {
    "too_short": gettext_noop(
        "Not rated: the match was too short (each player needs 3 decisions, or a hand "
        "played to its end)."
    ),
    "pair_limit": gettext_noop(
        "Not rated: you two already played 2 rated matches against each other in the last 24 hours."
    ),
}


def unrated_text(reason: str | None) -> str:
    """The result card's sentence for an ``unrated_reason`` (empty when none is needed)."""
    text = _UNRATED.get(reason or "")
    return str(_(text)) if text is not None else ""


def rated_rule() -> str:
    """The start screen's line on what makes a ranked match rated (matches.play.fairplay)."""
    return str(
        _(
            "Rated when each player makes at least %(n)d decisions or a hand is played to its "
            "end; at most %(k)d rated matches a day between the same two players. Leaving "
            "before Start, or not pressing it, counts against you: repeated, it keeps you "
            "out of the ranked queue for a while."
        )
        % {"n": conf.rated_min_decisions(), "k": conf.rated_pair_limit()}
    )


def settlement_panel(view: dict[str, Any], players: list[dict[str, Any]]) -> dict[str, Any] | None:
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


def result_panel(view: dict[str, Any], players: list[dict[str, Any]], me: int, own: bool) -> Any:
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
            if w != me:  # on your own screen: あなたが投了しました, not your name
                reason = {
                    "balance": _("Your balance reached 0"),
                    "time": _("You ran out of time"),
                    "resign": _("You resigned"),
                }.get(end or "", reason)
    elif end == "void" or m.get("status") == "voided":
        # 中止 (レーティング結果なし); the stored reason is English source text, shown translated.
        headline = _("Match voided (no rating result)")
        source = m.get("void_reason") or res.get("reason")
        reason = _(source) if source else _("Voided after a service fault: no rating result")
    else:
        headline = _("Match cancelled")
        reason = _("Aborted before the first decision: no winner, no rating change")
    return {"winner": w, "end": end, "how": how_text(end), "headline": headline,
            "reason": reason, "ratings": _rating_changes(m, players),
            "unrated": unrated_text(res.get("unrated_reason"))}  # fmt: skip


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
                "before": rating_text(r.get("display")),
                "after": None if before is None else int(before) + int(d),
            }
        )
    return out


OVER = ("finished", "aborted", "voided")


# A rematch is offered after a finished or voided match: both were played by two
# present players (a void is the service's fault, so playing again is the remedy).
# An aborted match never started (someone did not press Start or never moved), so
# the page offers none; an offer made there anyway (the JSON API) is still shown
# and can be answered.
REMATCH_OFFERED_AFTER = ("finished", "voided")


def rematch_panel(view: dict[str, Any], me: int, server_now: Any) -> dict[str, Any] | None:
    """The result panel's rematch part, from ``view["match"]["rematch"]`` (lobby/rematch.py)."""
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


def after_links(view: dict[str, Any], me: int) -> dict[str, Any] | None:
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
