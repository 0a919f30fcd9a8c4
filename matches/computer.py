"""Playing the computer: the site's computer players and the way their moves are made.

Each level of ``bots`` (1 入門, 2 中級, 3 上級) plays for an account of its own
(``User.computer_level``; a BOT badge like any program). A match against it is
casual and unrated, and otherwise an ordinary match: the computer presses 開始
and 次へ at once, and when it is to act the match's wake-up time is when it
starts thinking (0.4 s after its decision began, ``services.COMPUTER_PAUSE_MS``).

**No timing leak.** Its move is released at a fixed time after its decision
began (1.2 s), however long the decision took: level 3 searches only when more
than one placement fits, so an answer that came as soon as it was computed
would tell the opponent that nothing else in its hand fits. A decision done
early waits on a timer (:func:`_release`); only one that took longer than the
0.8 s between the two is late. Its randomness comes from ``secrets`` (a fresh
seed each decision), never from the match's id or version.

The deadline sweeper (``matches.sweeper``) finds that wake-up time like any
deadline, so a computer whose process was restarted resumes by itself. It asks
:func:`matches.services.computer_turn` for the computer seat's **view** (never
the state), and :func:`dispatch` hands it on:

- the decision is made in a separate process (``bots.decide``, up to ~300 ms
  of CPU at level 3), so neither the web process's event loop nor the
  worker's sweeper waits for it;
- the action then goes through ``services.act`` on the match threads, timed on
  receipt like anyone's frame; a match that moved on meanwhile refuses it as
  stale, and the sweeper asks again.

Where: in the web process in the embedded default, in the Celery worker on
Redis (wherever the sweeper runs).
"""

from __future__ import annotations

import logging
import multiprocessing
import random
import secrets
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import close_old_connections, transaction
from django.utils.translation import gettext_lazy as _

import bots
from accounts.models import COMPUTER_LEVELS

from . import services
from .models import Match

log = logging.getLogger(__name__)

LEVELS = COMPUTER_LEVELS  # 1 入門, 2 中級, 3 上級
RETRY_AFTER_S = 10.0  # a decision not applied by then is asked for again

_lock = threading.Lock()
_in_flight: dict[tuple[int, int], float] = {}
_threads: ThreadPoolExecutor | None = None
_timers: set[threading.Timer] = set()  # decisions waiting for their release time
_processes: Executor | None = None


def account(level: int) -> Any:
    """The account the computer plays with at ``level`` (made on first use)."""
    if level not in LEVELS:
        raise services.ServiceError("bad_request", str(_("There is no such level.")))
    user, created = get_user_model().objects.get_or_create(
        username=f"computer-{level}",
        defaults={"is_bot": True, "computer_level": level},
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def play(user: Any, level: int) -> Match:
    """A casual match of ``user`` against the computer at ``level``; seats drawn at random."""
    computer = account(level)
    with transaction.atomic():
        services.claim_players([user])
        from .budgets import check_hourly

        check_hourly(user, "computer")
        seats = (user, computer) if secrets.randbelow(2) else (computer, user)
        return services.new_match(Match.Kind.CASUAL, *seats)


# --- the decisions --------------------------------------------------------------------


def _pools() -> tuple[ThreadPoolExecutor, Executor]:
    global _threads, _processes
    with _lock:
        if _threads is None:
            _threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="computer")
        if _processes is None:
            if getattr(settings, "COMPUTER_IN_PROCESS", False):
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


def dispatch(turn: services.ComputerTurn) -> bool:
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


def _decide_and_act(turn: services.ComputerTurn) -> None:
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
        wait_s = (turn.release_at - services.now_ms()) / 1000
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


def _rng(turn: services.ComputerTurn) -> random.Random:
    """Seeded from ``secrets``: nobody can replay its choices from the match's id and
    version. Only with a test deal seed (``SB_DEAL_SEED``, refused outside DEBUG and
    tests) are its choices as predictable as the deals, so a scripted game replays."""
    seed = getattr(settings, "DEAL_SEED", None)
    if seed is not None:
        return random.Random(f"{seed}:computer:{turn.match_id}:{turn.version}")
    return random.Random(secrets.randbits(128))


def _release(turn: services.ComputerTurn, frame: dict[str, Any]) -> None:
    """Apply the computer's decided ``frame`` (at or after ``turn.release_at``)."""
    with _lock:
        _timers.difference_update([t for t in _timers if not t.is_alive() or t.finished.is_set()])
    try:
        user = get_user_model().objects.get(pk=turn.user_id)
        from . import db

        # On the match threads, like a socket's frame (SQLite: its one writer).
        db.executor().submit(
            db.call, services.act, turn.match_id, user, frame, services.now_ms()
        ).result(timeout=30)
    except services.ServiceError as e:
        log.info("the computer's move in match %s was refused: %s", turn.match_id, e.code)
    except Exception:
        log.exception("the computer could not play in match %s", turn.match_id)
    finally:
        close_old_connections()


def shutdown() -> None:
    """Stop the pools (a worker or web process stopping)."""
    global _threads, _processes
    with _lock:
        threads, processes = _threads, _processes
        _threads = _processes = None
        for timer in _timers:
            timer.cancel()  # a decision not released yet: the next process asks again
        _timers.clear()
    for pool in (threads, processes):
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
