"""Every setting the match platform reads, in one place.

``config/settings.py`` declares each one with its default (and reads those that
an operator may set from the environment); nothing under ``matches/`` reads
``django.conf.settings`` for them but this module, so no second default can
drift from the first. Each is read when asked for: tests change them.
"""

from __future__ import annotations

from django.conf import settings

import engine


def match_clock() -> engine.ClockConfig:
    """The match clock: 120 s main time and a 10 s delay (RULES §7)."""
    return engine.ClockConfig(
        main_ms=int(settings.MATCH_MAIN_MS), delay_ms=int(settings.MATCH_DELAY_MS)
    )


def start_window_ms() -> int:
    return int(settings.MATCH_START_WINDOW_MS)


def invite_start_window_ms() -> int:
    """An invite's match waits longer for 開始: its creator may have stepped away."""
    return int(settings.INVITE_START_WINDOW_MS)


def continue_window_ms() -> int:
    return int(settings.MATCH_CONTINUE_WINDOW_MS)


def outage_rejoin_ms() -> int:
    return int(settings.OUTAGE_REJOIN_MS)


def outage_rejoin_per_match_ms() -> int:
    return int(settings.OUTAGE_REJOIN_PER_MATCH_MS)


def computer_pause_ms() -> tuple[int, int]:
    lo, hi = settings.COMPUTER_PAUSE_MS
    return int(lo), int(hi)


def computer_in_process() -> bool:
    return bool(settings.COMPUTER_IN_PROCESS)


def deal_seed() -> int | None:
    return settings.DEAL_SEED  # type: ignore[no-any-return]


def match_db_threads() -> int:
    return int(settings.MATCH_DB_THREADS)


def sweeper() -> str:
    """Where the deadline sweeper runs: ``"web"`` (the embedded default) or ``"celery"``."""
    return str(settings.MATCH_SWEEPER)


def background() -> bool:
    """Whether a web process runs its background loops (off under tests by default)."""
    return bool(settings.MATCH_BACKGROUND)


def redis_url() -> str:
    return str(settings.REDIS_URL)


def liveness_prefix() -> str:
    return str(settings.LIVENESS_PREFIX)


def liveness_probe() -> str:
    return str(settings.LIVENESS_PROBE)


# --- budgets (matches/lobby/budgets.py, matches/realtime/budgets.py) -------------------


def per_hour(what: str) -> int:
    """How many ``what`` (``invite``, ``same_device``, ``computer``) a user may create an hour."""
    name = {
        "invite": "INVITES_PER_HOUR",
        "same_device": "SAME_DEVICE_PER_HOUR",
        "computer": "COMPUTER_MATCHES_PER_HOUR",
    }[what]
    return int(getattr(settings, name))


def queue_joins_per_minute() -> int:
    return int(settings.QUEUE_JOINS_PER_MINUTE)


def socket_frame_burst() -> int:
    return int(settings.SOCKET_FRAME_BURST)


def socket_frames_per_s() -> int:
    return int(settings.SOCKET_FRAMES_PER_S)


def sockets_per_user() -> int:
    return int(settings.SOCKETS_PER_USER)


def spectators_per_match() -> int:
    return int(settings.SPECTATORS_PER_MATCH)


# --- rated or not (matches/play/fairplay.py) ----------------------------------------------


def rated_min_decisions() -> int:
    return int(settings.RATED_MIN_DECISIONS)


def rated_pair_limit() -> int:
    return int(settings.RATED_PAIR_LIMIT)
