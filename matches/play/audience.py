"""What each audience of a match sees: its view, its ``state`` frame, a committed ``Change``.

Audiences are ``seat0``, ``seat1`` (or the one ``device``) and ``watch``. A view is
the engine's view for the seat plus the platform's ``match`` block
(docs/protocol.md); hidden information is left to ``engine.view_for``.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

import engine
from matches.models import Match, RematchOffer
from matches.play import fairplay, jsontext


def audiences(m: Match) -> tuple[str, ...]:
    """The channel audiences of ``m``: each seat (or the one device), and spectators."""
    if m.kind == Match.Kind.SAME_DEVICE:
        return ("device", "watch")
    return ("seat0", "seat1", "watch")


def audience_of(m: Match, user_id: int | None) -> str:
    """Whose view ``user_id`` gets: a seat's, the device's, or a spectator's (``watch``)."""
    seats = m.seats_of(user_id)
    if not seats:
        return "watch"
    return "device" if m.kind == Match.Kind.SAME_DEVICE else f"seat{seats[0]}"


def _seat_for(m: Match, state: engine.MatchState | None, audience: str) -> int | None:
    if audience.startswith("seat"):
        return int(audience[4:])
    # Same device: the seat to act once it has revealed; nobody's hand otherwise.
    if audience == "device" and state is not None and not state.awaiting_reveal:
        return state.to_act
    return None


def view_for(
    m: Match,
    state: engine.MatchState | None,
    audience: str,
    now: int,
    *,
    since_seq: int | None = None,
) -> dict[str, Any]:
    """What ``audience`` sees (docs/protocol.md): the engine's view plus the ``match`` block.

    With ``since_seq`` the view's ``events`` are only those after it (a pushed
    change); without, the recent events (a full view, on connect).
    """
    seat = _seat_for(m, state, audience)
    view = _seat_view(state, seat, now, since_seq)
    view["match"] = match_block(m, audience, seat, now)
    return view


def _seat_view(
    state: engine.MatchState | None, seat: int | None, now: int, since_seq: int | None
) -> dict[str, Any]:
    """The engine's part of a view: built from the state alone, no row needed."""
    if state is None:
        view: dict[str, Any] = {"seat": seat, "phase": None, "events": []}
    else:
        view = engine.view_for(state, seat, now, since_seq=since_seq)
    view["events_after"] = since_seq
    return view


def match_block(m: Match, audience: str, seat: int | None, now: int) -> dict[str, Any]:
    """The view's ``match`` block: what the row says, for ``audience``."""
    return {
        "id": m.pk,
        "kind": m.kind,
        "status": m.status,
        "names": m.names(),
        "bots": m.bots(),
        "computer": None
        if m.computer_seat is None
        else {"seat": m.computer_seat, "level": m.computer_level},
        "you": seat if audience != "watch" else None,
        "watching": audience == "watch",
        "ready": list(m.ready),
        "ready_deadline": m.ready_deadline_ms,
        "server_now": now,
        "result": _result(m),
        "version": m.version,
        "void_reason": m.void_reason,
        "rematch": rematch_block(m) if audience != "watch" else None,
        "ratings": m.player_ratings or [None, None],
        "credit": m.last_credit,
        "rating_delta": m.rating_delta,
    }


def state_frame(view: dict[str, Any]) -> str:
    """The JSON text of a ``state`` frame holding ``view``."""
    return jsontext.dumps({"type": "state", "version": view["match"]["version"], "view": view})


def _result(m: Match) -> dict[str, Any] | None:
    if m.status == Match.Status.FINISHED:
        result: dict[str, Any] = {"winner": m.winner_seat, "end": m.end_reason}
    elif m.status == Match.Status.ABORTED:
        result = {"winner": None, "end": "abort"}
    elif m.status == Match.Status.VOIDED:
        result = {"winner": None, "end": "void", "reason": m.void_reason}
    else:
        return None
    return {**result, **fairplay.result_fields(m)}  # rated, unrated_reason


def rematch_block(m: Match) -> dict[str, Any] | None:
    """The ``rematch`` entry of the view's ``match`` block (see ``matches.lobby.rematch``)."""
    if not m.is_over:
        return None
    try:
        offer = m.rematch_offer  # cached on the instance: one query for all views
    except RematchOffer.DoesNotExist:
        offer = None
    if offer is None:
        return {
            "status": "none",
            "offered_by": None,
            "declined": False,
            "new_match": None,
            "expires_at": None,
        }
    status = offer.status
    if status == RematchOffer.Status.OPEN and timezone.now() >= offer.expires_at:
        status = "expired"
    return {
        "status": status,
        "offered_by": offer.offered_by,
        "declined": offer.status == RematchOffer.Status.DECLINED,
        "new_match": offer.new_match_id,
        "expires_at": (
            int(offer.expires_at.timestamp() * 1000)
            if offer.status == RematchOffer.Status.OPEN
            else None
        ),
    }


class Change:
    """A committed change of one match: its new version and each audience's state frame.

    An audience (``seat0``, ``seat1``, ``device``, ``watch``) gets its view
    (:meth:`view`, made from the row and the state in hand: nothing is read back)
    and the JSON text of its ``state`` frame (:meth:`frame`, docs/protocol.md),
    encoded at most once, when first asked for — once whatever number of sockets
    and processes send it, and not at all for an audience nobody listens to (the
    embedded default's pushes know who listens).
    """

    def __init__(
        self,
        m: Match,
        state: engine.MatchState | None,
        now: int,
        since_seq: int | None,
    ) -> None:
        self.match_id = m.pk
        self.version = m.version
        self.audiences = audiences(m)
        # The row's part now, under its lock (a view of a match that is over reads its
        # rematch offer); the engine's part, the costly one, from the state alone when
        # first asked for — after the commit, outside the row lock (issue 14).
        self._parts: dict[str, tuple[int | None, dict[str, Any]]] = {}
        for a in self.audiences:
            seat = _seat_for(m, state, a)
            self._parts[a] = (seat, match_block(m, a, seat, now))
        self._state, self._now, self._since = state, now, since_seq
        # The seat whose decision runs, if one does: a socket of that seat notes when
        # it was pushed its turn (``matches.play.act.credit_late_push``).
        self.to_act = (
            state.to_act if state is not None and engine.deadline(state) is not None else None
        )
        # The receipt (epoch ms) of the player's frame that made it, if one did
        # (``play.act``): how long its push took is admission's push delay.
        self.received_at: int | None = None
        # Where the frame that made it spent its time (``play.stages``), if a frame did.
        self.marks: dict[str, float] | None = None
        self._views: dict[str, dict[str, Any]] = {}
        self._frames: dict[str, str] = {}

    def built(self) -> Change:
        """Every audience's view built (after the commit: see ``save_change``)."""
        for a in self.audiences:
            self.view(a)
        return self

    def view(self, audience: str) -> dict[str, Any]:
        """``audience``'s view; shared by whoever asks: do not mutate it."""
        view = self._views.get(audience)
        if view is None:
            seat, block = self._parts[audience]
            view = _seat_view(self._state, seat, self._now, self._since)
            view["match"] = block
            self._views[audience] = view
        return view

    def frame(self, audience: str) -> str:
        if audience not in self._frames:
            self._frames[audience] = state_frame(self.view(audience))
        return self._frames[audience]

    @property
    def frames(self) -> dict[str, str]:
        """Every audience's frame (made now if not yet)."""
        return {a: self.frame(a) for a in self.audiences}
