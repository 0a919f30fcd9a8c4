"""Rematch: at the end of a match either player may offer to play again.

Frames on the match socket (the match consumer routes them here: ``play.act``
refuses them), or a POST to
``/matches/<id>/rematch/`` with the same ``op``:

- ``{"op": "rematch"}`` offers; if the opponent has already offered, it
  accepts instead (both pressing 再戦 at once starts one match);
- ``{"op": "rematch_accept"}`` accepts the opponent's open offer;
- ``{"op": "rematch_decline"}`` declines it. A decline is final for that
  match; the offerer sees it in the view.

A frame's ``version`` is not compared: the offer's own state decides (an
answer to an offer that is gone is refused as ``no_offer``, a second press is
a no-op), so a press racing the opponent's never fails as stale.

An offer stays open for :data:`OFFER_TTL`. The new match has the same kind (a
ranked rematch stays ranked and is rated like any ranked match) and the seats
swapped; it starts in status ``waiting`` like any match. Accepting takes both
players out of the ranked queue. At a same-device match, ``rematch`` creates
the new same-device match (same guest) at once.

Each change bumps the old match's version, appends an event (``rematch_offer``,
``rematch_accept``, ``rematch_decline``, ``rematch_withdrawn``) and pushes both
views. The view's ``match`` block carries (``matches.play.audience.rematch_block``)::

    "rematch": None                          # while the match is not over
    "rematch": {
        "status": "none" | "open" | "accepted" | "declined" | "withdrawn" | "expired",
        "offered_by": 0 | 1 | None,          # the seat that offered
        "declined": bool,
        "new_match": 42 | None,              # follow it: /matches/42/
        "expires_at": epoch ms | None,       # while open
    }

Creating the new match takes the players' user-row locks first, like the
ranked queue's pairing (``matches.lobby.matchmaking``), so neither can be put into two
matches at once; a player who is busy elsewhere makes the accept fail (and
withdraws the offer if it is the offerer who is busy).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from matches.models import Match, RematchOffer
from matches.play import timing
from matches.play.act import Outcome, seated
from matches.play.errors import ServiceError
from matches.play.frames import REMATCH_OPS
from matches.play.seating import busy_error, claim_players, lock_users, new_match
from matches.play.store import locked_match, save_change

__all__ = ["OFFER_TTL", "act_rematch"]

OFFER_TTL = timedelta(minutes=2)


def act_rematch(match_id: int, user: Any, op: str) -> Any:
    """Handle one rematch ``op`` by ``user``; returns a ``Outcome``."""
    if op not in REMATCH_OPS:
        raise ServiceError("bad_request", _("Unknown operation."))
    error = None
    with transaction.atomic():
        m, seats, state = seated(locked_match(match_id), user)
        if not m.is_over:
            raise ServiceError(
                "not_over", _("A rematch can be offered once the match is over."), version=m.version
            )
        now = timezone.now()
        offer = RematchOffer.objects.filter(match=m).first()
        is_open = (
            offer is not None
            and offer.status == RematchOffer.Status.OPEN
            and now < offer.expires_at
        )
        seat = seats[0]
        events: list[dict[str, Any]] = []
        t = timing.now_ms()

        if m.kind == Match.Kind.SAME_DEVICE:
            if op != "rematch":
                raise ServiceError("bad_request", _("Unknown operation."), version=m.version)
            if offer is not None and offer.new_match_id is not None:
                return Outcome(m, state)  # pressed twice: the rematch exists already
            new, error = _create(m, offer, offerer_seat=0)
            if new is not None:
                offer = _store(offer, m, 0, RematchOffer.Status.ACCEPTED, now, new)
                events.append({"type": "rematch_accept", "seat": 0, "new_match": new.pk, "t": t})
        elif op == "rematch" and not is_open:
            if offer is not None and offer.status == RematchOffer.Status.ACCEPTED:
                return Outcome(m, state)  # pressed again: the rematch exists already
            if offer is not None and offer.status == RematchOffer.Status.DECLINED:
                raise ServiceError(
                    "rematch_closed", _("The rematch was already answered."), version=m.version
                )
            offer = _store(offer, m, seat, RematchOffer.Status.OPEN, now, None)
            events.append({"type": "rematch_offer", "seat": seat, "t": t})
        elif op == "rematch" and offer is not None and offer.offered_by == seat:
            return Outcome(m, state)  # offered twice: nothing new
        else:
            # Accept (or decline) the opponent's open offer; "rematch" against an
            # open offer by the opponent accepts it.
            if not is_open or offer is None or offer.offered_by == seat:
                raise ServiceError(
                    "no_offer", _("There is no rematch offer to answer."), version=m.version
                )
            if op == "rematch_decline":
                offer.status = RematchOffer.Status.DECLINED
                offer.save(update_fields=["status"])
                events.append({"type": "rematch_decline", "seat": seat, "t": t})
            else:
                new, error = _create(m, offer, offerer_seat=offer.offered_by)
                if new is not None:
                    offer.status, offer.new_match = RematchOffer.Status.ACCEPTED, new
                    offer.save(update_fields=["status", "new_match"])
                    events.append(
                        {"type": "rematch_accept", "seat": seat, "new_match": new.pk, "t": t}
                    )
                elif error is not None and error.code == "opponent_busy":
                    offer.status = RematchOffer.Status.WITHDRAWN
                    offer.save(update_fields=["status"])
                    events.append({"type": "rematch_withdrawn", "seat": offer.offered_by, "t": t})
                else:
                    raise error
        if events:
            save_change(m, state, events, before=state)
    return Outcome(m, state, error)


def _store(
    offer: RematchOffer | None,
    m: Match,
    seat: int,
    status: str,
    now: Any,
    new: Match | None,
) -> RematchOffer:
    if offer is None:
        offer = RematchOffer(match=m)
    offer.offered_by = seat
    offer.status = status
    offer.created_at = now
    offer.expires_at = now + OFFER_TTL
    offer.new_match = new
    offer.save()
    return offer


def _create(m: Match, offer: RematchOffer | None, *, offerer_seat: int) -> tuple[Match | None, Any]:
    """The new match (seats swapped), or ``(None, ServiceError)`` when someone is busy.

    The offerer is checked first: a busy offerer withdraws the offer (``opponent_busy``).
    """
    if m.kind == Match.Kind.SAME_DEVICE:
        try:
            claim_players([m.player0], waiting_ok=False)
        except ServiceError as e:
            return None, e
        return new_match(Match.Kind.SAME_DEVICE, m.player0, None, m.guest_name), None
    assert m.player1 is not None
    players = [m.player0, m.player1]
    offerer = players[offerer_seat]
    accepter = players[1 - offerer_seat]
    lock_users([m.player0_id, m.player1_id])
    if (busy := busy_error(offerer.pk, mine=False, waiting_ok=False)) is not None:
        return None, busy
    try:
        # Accepting takes both players out of the ranked queue: they are playing now.
        claim_players([accepter, offerer], waiting_ok=False)
    except ServiceError as e:
        return None, e
    return new_match(m.kind, m.player1, m.player0), None
