"""Which web process holds each seat's socket, so that a killed process's seats are not charged.

With two web processes, killing one is no outage of the tier: the other goes
on receiving frames, and nothing was given back. But the seats whose sockets
the dead process held could send nothing until they had reconnected through
the proxy to the other — at 200 matches, a wave that took seconds, charged to
whoever was to act (issue 14: 510,770 ms in one drill). So on Redis each web
process keeps a hash of the seats whose sockets it holds
(``<prefix>:presence:<process>``: ``"<match>:<seat>:<socket>"`` → when it connected),
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

from matches.play import late_push
from matches.play.late_push import Late

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


def _field(match_id: int, seat: int, socket: str) -> str:
    # One field per socket: a seat with two sockets here (two tabs, or a reconnection
    # whose old socket closes after the new one opened) stays held while either is open.
    return f"{match_id}:{seat}:{socket}" if socket else f"{match_id}:{seat}"


def _seat_of(field: bytes | str) -> tuple[int, int]:
    m, s, *_ = (field.decode() if isinstance(field, bytes) else field).split(":")
    return int(m), int(s)


def here(
    match_id: int, seats: list[int], at_ms: int, process: str | None = None, *, socket: str = ""
) -> None:
    """This process now holds ``socket``, the socket of ``seats`` of the match (best effort)."""
    from matches.clock.liveness import process_name

    client = _client()
    if client is None or not seats:
        return
    try:
        client.hset(
            _key(process or process_name()),
            mapping={_field(match_id, s, socket): at_ms for s in seats},
        )
    except Exception:
        log.debug("presence not recorded", exc_info=True)


def gone(match_id: int, seats: list[int], process: str | None = None, *, socket: str = "") -> None:
    """``socket``, the socket of ``seats``, closed here (the seat's other sockets stay)."""
    from matches.clock.liveness import process_name

    client = _client()
    if client is None or not seats:
        return
    try:
        client.hdel(_key(process or process_name()), *[_field(match_id, s, socket) for s in seats])
    except Exception:
        log.debug("presence not dropped", exc_info=True)


def take(process: str) -> dict[tuple[int, int], int]:
    """The seats a (dead) process held (each seat's earliest socket), and forget them."""
    client = _client()
    if client is None:
        return {}
    key = _key(process)
    pipe = client.pipeline(transaction=True)
    pipe.hgetall(key)
    pipe.delete(key)
    held, _ = pipe.execute()
    out: dict[tuple[int, int], int] = {}
    for field, at in held.items():
        seat = _seat_of(field)
        out[seat] = min(out.get(seat, int(at)), int(at))
    return out


def back_at(processes: list[str], seats: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """When each seat's socket connected to one of ``processes`` (those not back: absent)."""
    client = _client()
    if client is None or not seats or not processes:
        return {}
    wanted = set(seats)
    pipe = client.pipeline(transaction=False)
    for p in processes:
        pipe.hgetall(_key(p))
    found: dict[tuple[int, int], int] = {}
    for held in pipe.execute():
        for field, at in held.items():
            seat = _seat_of(field)
            if seat in wanted:
                found[seat] = min(found.get(seat, int(at)), int(at))
    return found


def credit_dead(dead: str, last_beat_ms: int, now_ms: int, alive: list[str]) -> list[int]:
    """Peer ``dead`` stopped beating at ``last_beat_ms``: its seats are given their time back.

    Called by a live process's beat, under the web rows' locks (so once per death). Its
    matches are locked in one statement (at 500 matches a lock per seat took seconds
    on the loaded survivor, and every push of the beat waits for its commit).
    """
    held = take(dead)
    if not held:
        return []
    back = back_at(alive, list(held))
    lates = late_push.read(list(held))  # pushes that reached its sockets late
    changed = []
    with transaction.atomic():
        locked = _lock_matches({m for m, _ in held})
        only_held: dict[int, Any] = {}
        for (match_id, seat), _at in sorted(
            held.items(), key=lambda kv: _acting_first(locked, kv[0])
        ):
            returned = back.get((match_id, seat))
            end = returned if returned is not None and returned > last_beat_ms else now_ms
            # Held until its first action, back or not: in a wave a socket that connected
            # got its view seconds later (the drill at 200 matches), so the time until
            # that action is given back too (matches.play.act), at most ``rejoin_until``.
            m = locked.get(match_id)
            late = lates.get((match_id, seat))
            if m is not None and _credit_locked(
                m, seat, last_beat_ms, end, waiting=True, late=late, only_held=only_held
            ):
                changed.append(match_id)
        _save_held(only_held)
    # The dead process may have committed a change and died before pushing it: the
    # seats on live processes would wait on the version before it until something else
    # moved (the drill at 500 matches, one web process killed: 21 seats a version
    # behind until their opponents came back, 9 s later). Every match it held a seat
    # of and gave nothing new to is pushed again as it stands.
    from matches.play.store import push_again

    for match_id in sorted({m for m, _ in held} - set(changed)):
        push_again(match_id)
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
    from matches.play.store import locked_match

    with transaction.atomic():
        m = locked_match(match_id)
        return m is not None and _credit_locked(m, seat, start_ms, end_ms, waiting=waiting)


def _acting_first(locked: dict[int, Any], key: tuple[int, int]) -> tuple[int, bool, int]:
    """The order a dead or leaving process's seats are credited in: by match, the seat
    to act first (given its time before the other is held), then by seat."""
    match_id, seat = key
    m = locked.get(match_id)
    to_act = m is not None and m.state is not None and m.state.get("to_act") == seat
    return match_id, not to_act, seat


def _lock_matches(ids: set[int]) -> dict[int, Any]:
    """The matches ``ids``, locked until the transaction ends, in one statement (in the
    order of their keys, as every lock of several matches is taken)."""
    from matches.models import Match

    rows = Match.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    return {m.pk: m for m in rows}


def _credit_locked(
    m: Any,
    seat: int,
    start_ms: int,
    end_ms: int,
    *,
    waiting: bool,
    late: Late | None = None,
    only_held: dict[int, Any] | None = None,
) -> bool:
    """:func:`credit_away` of match ``m``, whose row this transaction holds locked;
    ``late``: the seat's turn had reached its socket late (given first, up to ``start_ms``).

    ``only_held``: a match whose seat is only held (no time given, no event) is put
    there, to be written with the others in one statement (:func:`_save_held`), not
    saved on its own."""
    from dataclasses import replace

    import engine
    from matches import conf
    from matches.models import Match
    from matches.play.act import credit_late_pushed
    from matches.play.credit import LastCredit
    from matches.play.store import save_change

    if m.is_over or m.status != Match.Status.LIVE or m.state is None:
        return False
    if seat == m.computer_seat:
        return False
    state = before = engine.from_dict(m.state)
    to_act = state.to_act == seat and engine.deadline(state) is not None
    events: list[dict[str, Any]] = []
    if to_act and late is not None:
        # Its turn reached the socket late before the socket went: that wait first.
        state = credit_late_pushed(m, state, seat, late, end_ms, events, until=start_ms)
    prior = LastCredit.of(m)
    if prior is not None:
        start_ms = max(start_ms, prior.given_through())
    ms = 0
    if to_act and end_ms > start_ms:
        state, ms = engine.credit(state, start_ms, end_ms)
    if not ms and not waiting and not events:
        return False
    # How far time has been given back moves only with time given: a seat not to act
    # is only held, and the seat to act may still be owed the time before ``end_ms``
    # (its own process died earlier, or it is handled next: the drill at 500 matches
    # charged a seat 1.2 s when its opponent's process died 2 s after its own).
    if ms:
        through: int | None = max(end_ms, prior.given_through() if prior is not None else 0)
    else:
        through = prior.through if prior is not None else None
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
        # A hold that gave nothing starts where the seat went away, not where it ends.
        to = end_ms if ms else start_ms
        credit = LastCredit(ms=ms, seat=seat if to_act else None, to=to, through=through)
        if waiting:
            credit = replace(
                credit,
                start=state.decision_start if to_act else None,
                away=(seat,),
                rejoin_until=window_end,
            )
    credit.save_to(m)
    if ms:
        event = {"type": "credit", "from": start_ms, "to": end_ms, "t": end_ms, "ms": ms}
        event.update(player=seat, socket=True)
        events.append(event)
    if not events:
        if only_held is None:
            m.save(update_fields=["last_credit"])
        else:
            only_held[m.pk] = m
        return False
    if only_held is not None:
        only_held.pop(m.pk, None)  # its row is written whole now (save_change)
    save_change(m, state, events, before=before, now=end_ms)
    return True


def _save_held(matches: dict[int, Any]) -> None:
    """Write the holds of ``matches`` (their ``last_credit``), in one statement. A
    process stopping with 900 seats held them one UPDATE each, about a second before
    its sockets could close (the drill at 500 matches)."""
    from matches.models import Match

    if matches:
        Match.objects.bulk_update(list(matches.values()), ["last_credit"])


def hold_leaving(process: str, at_ms: int) -> int:
    """This web process stops cleanly at ``at_ms`` and is about to close its sockets:
    every seat it holds is held until its socket is back on another process, and the
    time until then is given back. Returns how many seats were held.

    One transaction locks every match first, in one statement, then holds each seat:
    at 500 matches a transaction per seat did not finish within the 4 s the shutdown
    gives it (``config.serve.LEAVE_HOLD_S``), and the seats not yet held when the
    sockets closed were charged their way back (up to 3.6 s each in a drill).
    """
    from matches.play.store import writes_together

    held = take(process)
    if not held:
        return 0
    try:
        with transaction.atomic():
            locked = _lock_matches({m for m, _ in held})
            lates = late_push.read(list(held))
            only_held: dict[int, Any] = {}
            # Every seat's change in one round trip; then the holds that changed nothing
            # else (after: a match whose seat was held after its other seat's change
            # was written has its last hold written last).
            with writes_together():
                for match_id, seat in sorted(held, key=lambda key: _acting_first(locked, key)):
                    if match_id in locked:
                        late = lates.get((match_id, seat))
                        _credit_locked(
                            locked[match_id],
                            seat,
                            at_ms,
                            at_ms,
                            waiting=True,
                            late=late,
                            only_held=only_held,
                        )
            _save_held(only_held)
    except Exception:
        log.exception("the seats of process %s were not held for the restart", process)
    return len(held)
