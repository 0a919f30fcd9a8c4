"""The last outage given back to a match: ``Match.last_credit``, typed.

Stored (and shown in the view's ``match.credit``, docs/protocol.md) as JSON:
``{"ms", "seat", "to"}``, and while the seat whose decision the outage cut has
not come back yet, ``"start"`` (that decision's start) and ``"rejoin_until"``
as well, and ``"away"``: the people's seats whose sockets are not back yet.
Written by ``matches.clock.outage`` (and ``matches.clock.presence``) and, when
the seat is back, by ``matches.play.act``; read by ``matches.play.timing`` (the
rejoin hold).

``"through"``: the latest moment time has been given back up to, by any credit
(an outage, a dead peer's seats, a rejoin). A later credit starts no earlier: one
stretch of our time is never given twice (the drill at 200 matches gave a match an
outage of the tier and a killed peer's seat back for the same seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matches.models import Match


@dataclass(frozen=True)
class LastCredit:
    ms: int  # the time given back
    seat: int | None  # whose clock got it; None: a start or continue window moved on
    to: int  # epoch ms: when the server was back
    start: int | None = None  # the cut decision's start: the hold is for that decision only
    rejoin_until: int | None = None  # until when the cut seat may still come back for it
    # The people's seats not back yet: a decision of theirs started meanwhile (the
    # opponent came back first and moved) is held the same way until they are.
    away: tuple[int, ...] = ()
    # Held seats' way back given so far (epoch ms): its socket connected then, and the
    # hold lasts until its first action, which is given the time since.
    given_to: int | None = None
    through: int | None = None  # time given back up to here (epoch ms), all credits

    def given_through(self) -> int:
        """Up to when time has been given back: a new credit starts no earlier."""
        return max(self.to, self.given_to or 0, self.through or 0)

    @classmethod
    def of(cls, m: Match) -> LastCredit | None:
        raw = m.last_credit
        if not raw:
            return None
        held = raw.get("rejoin_until")
        return cls(
            ms=int(raw["ms"]),
            seat=raw.get("seat"),
            to=int(raw["to"]),
            start=raw.get("start"),
            rejoin_until=None if held is None else int(held),
            away=tuple(int(x) for x in raw.get("away") or ()),
            given_to=None if raw.get("given_to") is None else int(raw["given_to"]),
            through=None if raw.get("through") is None else int(raw["through"]),
        )

    def stored(self) -> dict[str, Any]:
        """The JSON of the row (the hold's keys only while it lasts)."""
        out: dict[str, Any] = {"ms": self.ms, "seat": self.seat, "to": self.to}
        if self.through is not None and self.through > self.to:
            out["through"] = self.through
        if self.rejoin_until is not None:
            out["rejoin_until"] = self.rejoin_until
            if self.start is not None:  # none once the cut decision's seat is back
                out["start"] = self.start
            if self.given_to is not None:
                out["given_to"] = self.given_to
        if self.away:
            out["away"] = list(self.away)
        return out

    def save_to(self, m: Match) -> None:
        m.last_credit = self.stored()


def given_through(m: Match) -> int | None:
    """Up to when the match's time has been given back (``None``: never)."""
    credit = LastCredit.of(m)
    return None if credit is None else credit.given_through()
