"""Playing the computer: the site's computer players and the way their moves are made.

Each level of ``bots`` (1 入門, 2 中級, 3 上級) plays for an account of its own
(``User.computer_level``; a BOT badge like any program). A match against it is
casual and unrated, and otherwise an ordinary match: the computer presses 開始
and 次へ at once, and when it is to act the match's wake-up time is when it
starts thinking (0.4 s after its decision began, ``settings.COMPUTER_PAUSE_MS``).

**No timing leak.** Its move is released at a fixed time after its decision
began (1.2 s), however long the decision took: level 3 searches only when more
than one placement fits, so an answer that came as soon as it was computed
would tell the opponent that nothing else in its hand fits. A decision done
early waits on a timer (:func:`_release`); only one that took longer than the
0.8 s between the two is late. Its randomness comes from ``secrets`` (a fresh
seed each decision), never from the match's id or version.

The deadline sweeper (``matches.clock.sweeper``) finds that wake-up time like any
deadline, so a computer whose process was restarted resumes by itself. It asks
:func:`matches.lobby.computer.computer_turn` for the computer seat's **view** (never
the state), and :func:`dispatch` hands it on:

- the decision is made in a separate process (``bots.decide``, up to ~300 ms
  of CPU at level 3), so neither the web process's event loop nor the
  worker's sweeper waits for it;
- the action then goes through ``act`` on the match threads, timed on
  receipt like anyone's frame; a match that moved on meanwhile refuses it as
  stale, and the sweeper asks again.

Where: in the web process in the embedded default, in the Celery worker on
Redis (wherever the sweeper runs).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import random
import secrets
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import close_old_connections, transaction
from django.utils.translation import gettext_lazy as _

import bots
import engine
from accounts.models import COMPUTER_LEVELS
from accounts.reserved import computer_account
from matches import conf
from matches.lobby.budgets import check_hourly
from matches.models import Match, MatchEvent
from matches.play import timing
from matches.play.act import act
from matches.play.audience import view_for
from matches.play.errors import ServiceError
from matches.play.seating import claim_players, new_match
from matches.play.store import match_query
from matches.play.timing import computer_pause, computer_to_act

log = logging.getLogger(__name__)

LEVELS = COMPUTER_LEVELS  # 1 入門, 2 中級, 3 上級
RETRY_AFTER_S = 10.0  # a decision not applied by then is asked for again

_lock = threading.Lock()
_in_flight: dict[tuple[int, int], float] = {}
_threads: ThreadPoolExecutor | None = None
_timers: set[threading.Timer] = set()  # decisions waiting for their release time
_processes: Executor | None = None
_let_go: list[Executor] = []  # pools shut down without waiting, until one waits for them


def account(level: int) -> Any:
    """The account the computer plays with at ``level``: found by its level, never its name."""
    if level not in LEVELS:
        raise ServiceError("bad_request", str(_("There is no such level.")))
    return computer_account(level)


def play(user: Any, level: int) -> Match:
    """A casual match of ``user`` against the computer at ``level``; seats drawn at random."""
    computer = account(level)
    with transaction.atomic():
        claim_players([user])
        check_hourly(user, "computer")
        seats = (user, computer) if secrets.randbelow(2) else (computer, user)
        return new_match(Match.Kind.CASUAL, *seats)


# --- the decisions --------------------------------------------------------------------


def _pools() -> tuple[ThreadPoolExecutor, Executor]:
    global _threads, _processes
    with _lock:
        if _threads is None:
            _threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="computer")
        if _processes is None:
            if conf.computer_in_process():
                # Tests: decide on the calling thread (no process start-up per test).
                _processes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bots")
            else:
                # "spawn": the decider imports only engine + bots, and a fork of a
                # threaded server process is never safe.
                ctx = multiprocessing.get_context("spawn")
                _processes = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
        return _threads, _processes


def in_flight(match_id: int, version: int) -> bool:
    """Whether this decision is being made (or waits for its release) in this process."""
    with _lock:
        started = _in_flight.get((match_id, version))
    return started is not None and time.monotonic() - started < RETRY_AFTER_S


def dispatch(turn: ComputerTurn) -> bool:
    """Have the computer decide ``turn`` (not waiting for it); whether it was sent now."""
    key = (turn.match_id, turn.version)
    now = time.monotonic()
    with _lock:
        started = _in_flight.get(key)
        if started is not None and now - started < RETRY_AFTER_S:
            return False
        _in_flight[key] = now
        # Forget decisions long done (their versions are gone).
        for old in [k for k, t in _in_flight.items() if now - t > 10 * RETRY_AFTER_S]:
            del _in_flight[old]
    threads, _ = _pools()
    threads.submit(_decide_and_act, turn)
    return True


def _decide_and_act(turn: ComputerTurn) -> None:
    try:
        _, processes = _pools()
        future: Future[Any] = processes.submit(
            bots.decide,
            turn.view,
            turn.history,
            level=turn.level,
            rng=_rng(turn),
        )
        frame = future.result(timeout=30)
        if frame is None:
            log.warning("the computer had nothing to play in match %s", turn.match_id)
            return
        frame["version"] = turn.version
        wait_s = (turn.release_at - timing.now_ms()) / 1000
        if wait_s > 0:
            timer = threading.Timer(wait_s, _release, args=(turn, frame))
            timer.daemon = True
            with _lock:
                _timers.add(timer)
            timer.start()
            return
        _release(turn, frame)
    except Exception:
        log.exception("the computer could not play in match %s", turn.match_id)
    finally:
        close_old_connections()


def _rng(turn: ComputerTurn) -> random.Random:
    """Seeded from ``secrets``: nobody can replay its choices from the match's id and
    version. Only with a test deal seed (``SB_DEAL_SEED``, refused outside DEBUG and
    tests) are its choices as predictable as the deals, so a scripted game replays."""
    seed = conf.deal_seed()
    if seed is not None:
        return random.Random(f"{seed}:computer:{turn.match_id}:{turn.version}")
    return random.Random(secrets.randbits(128))


def _release(turn: ComputerTurn, frame: dict[str, Any]) -> None:
    """Apply the computer's decided ``frame`` (at or after ``turn.release_at``)."""
    with _lock:
        _timers.difference_update([t for t in _timers if not t.is_alive() or t.finished.is_set()])
    try:
        user = get_user_model().objects.get(pk=turn.user_id)
        from matches.play import db

        # On the match threads, like a socket's frame (SQLite: its one writer).
        db.executor().submit(db.call, act, turn.match_id, user, frame, timing.now_ms()).result(
            timeout=30
        )
    except ServiceError as e:
        log.info("the computer's move in match %s was refused: %s", turn.match_id, e.code)
    except Exception:
        log.exception("the computer could not play in match %s", turn.match_id)
    finally:
        close_old_connections()


def shutdown(*, wait_s: float = 0.0) -> None:
    """Stop the pools (tests; a process that stops needs nothing of it: its timers are
    daemon threads, and the next process's sweeper asks for the decision again).

    With ``wait_s``, a decision still being made or released is waited for (up to that
    long each), also one whose pool an earlier ``shutdown`` let go without waiting, and a
    move it timed meanwhile is cancelled too: a test ends with no thread of the
    computer's still using the database it is about to drop."""
    global _threads, _processes
    for _round in range(3 if wait_s > 0 else 1):
        with _lock:
            pools = [p for p in (_threads, _processes) if p is not None]
            _threads = _processes = None
            timers = list(_timers)
            for timer in timers:
                timer.cancel()  # a decision not released yet: the next process asks again
            _timers.clear()
            if wait_s > 0:
                pools += _let_go
                _let_go.clear()
            else:
                _let_go.extend(pools)
        for pool in pools:
            pool.shutdown(wait=wait_s > 0, cancel_futures=True)
        for timer in timers if wait_s > 0 else ():
            timer.join(wait_s)  # a cancelled one ends at once; one firing, once released
        if not pools and not timers:
            return


@dataclass(frozen=True)
class ComputerTurn:
    """What the computer player needs for one decision: its seat's view, nothing more.

    ``view`` and ``history`` are plain JSON, as a socket would carry them: the
    computer is given a view, never the state (ARCHITECTURE, "Promises").
    """

    match_id: int
    version: int
    seat: int
    level: int
    user_id: int
    view: dict[str, Any]
    history: list[dict[str, Any]]
    release_at: int = 0  # epoch ms: the move is applied then, not before


def computer_turn(match_id: int, version: int, now: int | None = None) -> ComputerTurn | None:
    """The computer's decision due in this match (its pause is over), if any.

    Read without a lock: the decision is applied later through :func:`act`, at
    its own receipt time and version, like anyone's frame (a stale one is refused).
    """
    m = next(iter(match_query().filter(pk=match_id, version=version)), None)
    if m is None or m.status != Match.Status.LIVE or m.state is None:
        return None
    state = engine.from_dict(m.state)
    found = computer_to_act(m, state)
    t = timing.now_ms() if now is None else now
    deadline = engine.deadline(state)
    if found is None or deadline is None or t >= deadline:
        return None  # nothing for the computer, or its time is up: the sweep decides
    seat, level = found
    user_id = m.player0_id if seat == 0 else m.player1_id
    assert user_id is not None
    # This hand's events as the seat saw them (a view holds only the recent 16).
    rows = MatchEvent.objects.filter(match_id=m.pk, data__hand=state.hand_no).order_by("id")
    history = [
        engine.event_for({k: v for k, v in e.items() if k not in _NOT_SHOWN}, seat)
        for e in rows.values_list("data", flat=True)
        if "seq" in e
    ]
    view = view_for(m, state, f"seat{seat}", t)
    assert state.decision_start is not None
    return ComputerTurn(
        m.pk,
        m.version,
        seat,
        level,
        user_id,
        json.loads(json.dumps(view)),
        history,
        state.decision_start + computer_pause()[1],
    )


# What the event log keeps for replays but a seat's events never carry.
_NOT_SHOWN = frozenset({"main", "balances", "used", "hands", "forced"})
