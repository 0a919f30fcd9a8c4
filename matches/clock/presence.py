"""Which web process holds each seat's socket, so that a killed process's seats are not charged.

With two web processes, killing one is no outage of the tier: the other goes
on receiving frames, and nothing was given back. But the seats whose sockets
the dead process held could send nothing until they had reconnected through
the proxy to the other — at 200 matches, a wave that took seconds, charged to
whoever was to act (issue 14: 510,770 ms in one drill). So on Redis each web
process keeps a hash of the seats whose sockets it holds
(``<prefix>:presence:<process>``: ``"<match>:<seat>"`` → when it connected),
and when a web process finds a peer that stopped beating without retiring
(killed), it gives each of the peer's seats that was to act the time since the
peer's last beat — until the seat's socket was back on a live process (or, not
back yet, until now) — and holds the seat as after an outage of the whole tier
(``rejoin_until``: its clock cannot run out meanwhile, and the time until its
first action is given back when it arrives).

Without Redis (the embedded default) there is one web process, whose death
is an outage of the whole tier (``matches.clock.liveness``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)


def _key(process: str) -> str:
    return f"{getattr(settings, 'LIVENESS_PREFIX', 'sb')}:presence:{process}"


def _client() -> Any:
    from matches.clock.liveness import _redis

    return _redis()


def seats_of_audience(audience: str) -> list[int]:
    if audience.startswith("seat"):
        return [int(audience[4:])]
    return [0, 1] if audience == "device" else []


def here(match_id: int, seats: list[int], at_ms: int, process: str | None = None) -> None:
    """This process now holds the socket of ``seats`` of the match (best effort)."""
    from matches.clock.liveness import process_name

    client = _client()
    if client is None or not seats:
        return
    try:
        client.hset(
            _key(process or process_name()), mapping={f"{match_id}:{s}": at_ms for s in seats}
        )
    except Exception:
        log.debug("presence not recorded", exc_info=True)


def gone(match_id: int, seats: list[int], process: str | None = None) -> None:
    """The socket of ``seats`` closed here."""
    from matches.clock.liveness import process_name

    client = _client()
    if client is None or not seats:
        return
    try:
        client.hdel(_key(process or process_name()), *[f"{match_id}:{s}" for s in seats])
    except Exception:
        log.debug("presence not dropped", exc_info=True)


def take(process: str) -> dict[tuple[int, int], int]:
    """The seats a (dead) process held, and forget them."""
    client = _client()
    if client is None:
        return {}
    key = _key(process)
    pipe = client.pipeline(transaction=True)
    pipe.hgetall(key)
    pipe.delete(key)
    held, _ = pipe.execute()
    out = {}
    for field, at in held.items():
        m, _, s = field.decode().partition(":")
        out[(int(m), int(s))] = int(at)
    return out


def back_at(processes: list[str], seats: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """When each seat's socket connected to one of ``processes`` (those not back: absent)."""
    client = _client()
    if client is None or not seats or not processes:
        return {}
    fields = [f"{m}:{s}" for m, s in seats]
    pipe = client.pipeline(transaction=False)
    for p in processes:
        pipe.hmget(_key(p), fields)
    found: dict[tuple[int, int], int] = {}
    for values in pipe.execute():
        for seat, at in zip(seats, values, strict=True):
            if at is not None:
                found[seat] = min(found.get(seat, int(at)), int(at))
    return found


def credit_dead(dead: str, last_beat_ms: int, now_ms: int, alive: list[str]) -> list[int]:
    """Peer ``dead`` stopped beating at ``last_beat_ms``: its seats are given their time back.

    Called by a live process's beat, under the web rows' locks (so once per death).
    """
    held = take(dead)
    if not held:
        return []
    back = back_at(alive, list(held))
    changed = []
    for (match_id, seat), _at in sorted(held.items()):
        returned = back.get((match_id, seat))
        end = returned if returned is not None and returned > last_beat_ms else now_ms
        # Held until its first action, back or not: in a wave a socket that connected
        # got its view seconds later (the drill at 200 matches), so the time until
        # that action is given back too (matches.play.act), at most ``rejoin_until``.
        if credit_away(match_id, seat, last_beat_ms, end, waiting=True):
            changed.append(match_id)
    if changed:
        log.warning("web process %s died: its seats given back their time in %s", dead, changed)
    return changed


def credit_away(match_id: int, seat: int, start_ms: int, end_ms: int, *, waiting: bool) -> bool:
    """Give ``seat`` back ``[start_ms, end_ms)`` of its running decision; if it is not back
    yet (``waiting``), hold it (``rejoin_until``): a decision of its own, running or to
    come, cannot run out until its socket is back, and the time until then is given.

    Time already given back (``LastCredit.given_through``) is not given again. A seat not
    to act is only held: the opponent, connected elsewhere, may move meanwhile, and the
    decision that starts then is this seat's (the drill's graceful restart at 200 matches
    charged such seats 0.3–0.9 s each).
    """
    from dataclasses import replace

    import engine
    from matches import conf
    from matches.models import Match
    from matches.play.credit import LastCredit
    from matches.play.store import locked_match, save_change

    with transaction.atomic():
        m = locked_match(match_id)
        if m is None or m.is_over or m.status != Match.Status.LIVE or m.state is None:
            return False
        if seat == m.computer_seat:
            return False
        state = engine.from_dict(m.state)
        prior = LastCredit.of(m)
        if prior is not None:
            start_ms = max(start_ms, prior.given_through())
        to_act = state.to_act == seat and engine.deadline(state) is not None
        before, ms = state, 0
        if to_act and end_ms > start_ms:
            state, ms = engine.credit(state, start_ms, end_ms)
        if not ms and not waiting:
            return False
        through = max(end_ms, prior.given_through() if prior is not None else 0)
        window_end = end_ms + conf.outage_rejoin_ms()
        if prior is not None and prior.rejoin_until is not None and prior.rejoin_until > end_ms:
            # A hold still runs (an outage, another peer): this seat joins it.
            credit = replace(
                prior,
                ms=prior.ms + ms,
                through=through,
                away=tuple(sorted({*prior.away, seat})) if waiting else prior.away,
                rejoin_until=max(prior.rejoin_until, window_end if waiting else 0),
            )
        else:
            credit = LastCredit(ms=ms, seat=seat if to_act else None, to=end_ms, through=through)
            if waiting:
                credit = replace(
                    credit,
                    start=state.decision_start if to_act else None,
                    away=(seat,),
                    rejoin_until=window_end,
                )
        credit.save_to(m)
        if not ms:
            m.save(update_fields=["last_credit"])
            return False
        event = {"type": "credit", "from": start_ms, "to": end_ms, "t": end_ms, "ms": ms}
        event.update(player=seat, socket=True)
        save_change(m, state, [event], before=before, now=end_ms)
        return True


def hold_leaving(process: str, at_ms: int) -> int:
    """This web process stops cleanly at ``at_ms`` and is about to close its sockets:
    every seat it holds is held until its socket is back on another process, and the
    time until then is given back. Returns how many seats were held."""
    held = take(process)
    for match_id, seat in sorted(held):
        try:
            credit_away(match_id, seat, at_ms, at_ms, waiting=True)
        except Exception:
            log.exception("seat %s of match %s not held for the restart", seat, match_id)
    return len(held)
