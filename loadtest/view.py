"""What a bot sees on its socket, read the same way from JSON frames and HTML fragments.

A JSON socket gets the whole view in every ``state`` frame (docs/protocol.md).
An HTML socket (``?format=html``, as the browser page opens it) gets htmx
fragments instead: top-level elements with an ``id`` that replace the page's
element of that id. A bot on such a socket reads exactly what the browser page
reads (static/js/match.js): ``#sb-status``'s ``data-version``, ``data-my-turn``,
``data-phase`` and ``data-status``, the hand tiles' ``data-tile``/``data-at``,
the buttons' ``data-op``, the bid input's ``min``/``max`` and the clocks'
``data-main``. Those ``data-*`` hooks are what the browser tests rely on too.

The server may send only the fragments that changed, so :class:`Fragments`
keeps the last one of each id, as the page does, and :func:`read_page` reads
the page as a whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import lxml.html

OVER = ("finished", "aborted", "voided")


@dataclass
class Seen:
    """One seat's situation, whichever format it came in."""

    version: int
    status: str  # waiting, live, finished, aborted, voided
    phase: str | None  # auction, play, hand_over, match_over; None before the start
    seat: int | None
    my_turn: bool
    can_start: bool  # the Start button is offered to this seat
    can_continue: bool  # between hands, this seat has not pressed Continue yet
    # In the auction, when this seat decides: which of decline/accept are offered,
    # and the bid range (None when it cannot afford the minimum).
    can_decline: bool = False
    can_accept: bool = False
    bid_range: tuple[int, int] | None = None
    # In play, when this seat is to act: (tile, [positions]); a position is None
    # for an opening tile, else {"tile": [a, b], "side": side}.
    playable: list[tuple[list[int], list[Any]]] = field(default_factory=list)
    main: list[int] | None = None  # main time per seat, ms, as of the server's now
    running: int | None = None  # the seat whose clock runs
    delay_left: int = 0  # of the running clock, ms
    # JSON only: the server's time of the view (epoch ms; a pushed change's is the receipt
    # of the frame that made it): splits a move's latency into its way to the server
    # and its way back (loadtest/report.py).
    server_now: int | None = field(default=None, compare=False)
    # JSON only (not compared): the frame's events as (seq, type, player), for the drill
    # to compare with the server's event log.
    events: list[tuple[int, str, int | None]] = field(default_factory=list, compare=False)

    @property
    def over(self) -> bool:
        return self.status in OVER

    @property
    def deciding(self) -> bool:
        """This seat is to act in the auction or in play."""
        return self.status == "live" and self.my_turn and self.phase in ("auction", "play")

    @property
    def decision(self) -> tuple[Any, ...]:
        """What this seat is asked to decide, less the clocks: the same before and after
        a change that only gave time back (a credit)."""
        return (
            self.status,
            self.phase,
            self.my_turn,
            self.can_start,
            self.can_continue,
            self.can_decline,
            self.can_accept,
            self.bid_range,
            sorted(self.playable, key=repr),
        )


# --- JSON ------------------------------------------------------------------------------


class Delta:
    """A version-2 socket's side (docs/protocol.md, ``?v=2``): the view it holds, made
    whole again from each frame's ``layout_delta`` and ``match_delta``."""

    def __init__(self) -> None:
        self.held: dict[str, Any] | None = None

    def whole(self, frame: dict[str, Any]) -> dict[str, Any]:
        """``frame`` with its view made whole (``ValueError``: nothing to apply it to)."""
        if frame.get("type") != "state":
            return frame
        view = dict(frame["view"])
        held = self.held
        if "layout_delta" in view:
            if held is None or held.get("layout") is None:
                raise ValueError("a layout delta before any layout")
            d = view.pop("layout_delta")
            view["layout"] = list(held["layout"][: d["keep"]]) + list(d["add"])
        if "match_delta" in view:
            if held is None or "match" not in held:
                raise ValueError("a match delta before any match block")
            view["match"] = {**held["match"], **view.pop("match_delta")}
        self.held = view
        return {**frame, "view": view}


def read_json(text: str, delta: Delta | None = None) -> tuple[Seen | None, str | None]:
    """A JSON frame: ``(seen, None)`` for a state, ``(None, code)`` for an error.

    ``delta``: the socket speaks version 2; its frames are made whole first."""
    frame = json.loads(text)
    if delta is not None:
        frame = delta.whole(frame)
    if frame.get("type") != "state":
        return None, str(frame.get("code"))
    view = frame["view"]
    m = view["match"]
    seat = view.get("seat")
    ready = m.get("ready") or [False, False]
    mine = seat in (0, 1)
    auction = view.get("auction") or {}
    clocks = view.get("clocks") or {}
    return (
        Seen(
            version=int(frame["version"]),
            status=m["status"],
            phase=view.get("phase"),
            seat=seat,
            my_turn=bool(view.get("my_turn")),
            can_start=m["status"] == "waiting" and mine and not ready[seat],
            can_continue=m["status"] == "live"
            and view.get("phase") == "hand_over"
            and mine
            and not ready[seat],
            can_decline=bool(auction.get("can_decline")),
            can_accept=bool(auction.get("can_accept")),
            bid_range=None
            if auction.get("max_bid") is None
            else (int(auction["min_bid"]), int(auction["max_bid"])),
            playable=[
                (
                    p["tile"],
                    [
                        None if a is None else {"tile": a["tile"], "side": a["side"]}
                        for a in p["at"]
                    ],
                )
                for p in view.get("playable") or []
            ],
            main=clocks.get("main"),
            running=clocks.get("running"),
            delay_left=int(clocks.get("delay_left") or 0),
            server_now=m.get("server_now") if isinstance(m.get("server_now"), int) else None,
            events=[
                (int(e["seq"]), str(e.get("type")), e.get("player"))
                for e in view.get("events") or []
                if "seq" in e
            ],
        ),
        None,
    )


# --- HTML ------------------------------------------------------------------------------


class Fragments:
    """The page as an HTML socket has built it: the last fragment of each id."""

    def __init__(self) -> None:
        self.by_id: dict[str, Any] = {}

    def merge(self, html: str) -> set[str]:
        """Swap in one frame's fragments; returns the ids it brought.

        An error comes alone, as the ``sb-toast`` fragment with ``data-code``.
        """
        ids = set()
        for el in lxml.html.fragments_fromstring(html):
            if isinstance(el, str) or not el.get("id"):
                continue  # text between fragments
            self.by_id[el.get("id")] = el
            ids.add(el.get("id"))
        return ids


def _tile(key: str) -> list[int]:
    a, b = key.split("-")
    return [int(a), int(b)]


def _position(key: str) -> Any:
    """``"4-4:straight_b"`` → ``{"tile": [4, 4], "side": "straight_b"}``; ``"open"`` → None."""
    if key == "open":
        return None
    tile, side = key.split(":", 1)
    return {"tile": _tile(tile), "side": side}


def toast_code(page: Fragments) -> str:
    """The code of the error toast last swapped in."""
    toast = page.by_id.get("sb-toast")
    return "" if toast is None else toast.get("data-code") or ""


def read_page(page: Fragments) -> Seen | None:
    """Read the page as match.js does: everything a bot needs, from the data-* hooks.

    This is the one place that knows the fragments' markup
    (templates/matches/_*.html); change it when they change.
    """
    frags = page.by_id
    status = frags.get("sb-status")
    if status is None:
        return None

    def every(fragment: str, attrs: str) -> list[Any]:
        """The elements below ``fragment`` with these attributes (an XPath predicate)."""
        el = frags.get(fragment)
        return el.xpath(f".//*[{attrs}]") if el is not None else []

    def one(fragment: str, attrs: str) -> Any:
        found = every(fragment, attrs)
        return found[0] if found else None

    seat_attr = status.get("data-seat") or ""
    main: list[int] = [0, 0]
    running = None
    delay_left = 0
    clocks = every("sb-me", "@data-clock") + every("sb-opponent", "@data-clock")
    for c in clocks:
        s = int(c.get("data-seat"))
        main[s] = int(c.get("data-main"))
        if c.get("data-running") == "1":
            running = s
            delay_left = int(c.get("data-delay-left") or 0)
    cont = one("sb-settlement", "@data-op='continue'")
    bid = one("sb-auction", "@data-bid-amount")
    return Seen(
        version=int(status.get("data-version")),
        status=status.get("data-status") or "",
        phase=status.get("data-phase") or None,
        seat=int(seat_attr) if seat_attr else None,
        my_turn=status.get("data-my-turn") == "1",
        can_start=one("sb-overlay", "@data-op='start'") is not None,
        can_continue=cont is not None and cont.get("disabled") is None,
        can_decline=one("sb-auction", "@data-op='decline'") is not None,
        can_accept=one("sb-auction", "@data-op='accept'") is not None,
        bid_range=None if bid is None else (int(bid.get("min")), int(bid.get("max"))),
        playable=[
            (_tile(b.get("data-tile")), [_position(k) for k in b.get("data-at").split()])
            for b in every("sb-hand", "@data-testid='hand-tile' and @data-at")
        ],
        main=main if len(clocks) == 2 else None,
        running=running,
        delay_left=delay_left,
    )
