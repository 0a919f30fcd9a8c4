"""A client frame's shape: its ops, its size limit, and the check of both.

Legality is the engine's business (``engine.apply``); here only the shape: an
object, a known ``op``, the version it acted on, a tile and position that are
tiles and positions, a bid that is a whole number.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

import engine
from engine.layout import ALL_SIDES
from matches.play.errors import ServiceError

MAX_FRAME_BYTES = 4096  # UTF-8 bytes of one client frame


ENGINE_OPS = ("place", "bid", "accept", "decline", "resign", "reveal")


PLATFORM_OPS = ("start", "continue", "flag", "sync")


REMATCH_OPS = ("rematch", "rematch_accept", "rematch_decline")  # matches/lobby/rematch.py


OPS = ENGINE_OPS + PLATFORM_OPS + REMATCH_OPS


IDEMPOTENT_OPS = ("start", "continue", "flag")


def parse_frame(frame: Any) -> dict[str, Any]:
    """Check a client frame's shape (not its legality). ``ServiceError`` on anything odd."""
    if not isinstance(frame, dict):
        raise ServiceError("bad_request", _("A frame is a JSON object."))
    op = frame.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise ServiceError("bad_request", _("Unknown operation."))
    if op != "sync":
        v = frame.get("version")
        if type(v) is not int or v < 0:
            raise ServiceError("bad_request", _("Every action carries the version it acted on."))
    out: dict[str, Any] = {"op": op, "version": frame.get("version")}
    if op == "place":
        try:
            out["tile"] = engine.normalize(_int_pair(frame.get("tile")))
            at = frame.get("at")
            if at is None:
                out["at"] = None
            else:
                if not isinstance(at, dict) or at.get("side") not in ALL_SIDES:
                    raise ValueError("at")
                out["at"] = (engine.normalize(_int_pair(at.get("tile"))), at["side"])
        except ValueError:
            raise ServiceError("bad_request", _("That is not a tile and position.")) from None
    elif op == "bid":
        amount = frame.get("amount")
        if type(amount) is not int:
            raise ServiceError("bad_request", _("A bid is a whole number of points."))
        out["amount"] = amount
    return out


def _int_pair(x: Any) -> list[int]:
    if not isinstance(x, list) or len(x) != 2 or any(type(v) is not int for v in x):
        raise ValueError("tile")
    return x
