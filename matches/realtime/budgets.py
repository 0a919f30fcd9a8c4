"""What one socket and one match may spend: frames, sockets per user, spectators per match.

Each limit refuses with a stable code (docs/protocol.md § "Limits"; README
"Abuse and limits"); the numbers are settings (``matches.conf``). What an
account may create (invites, matches, queue joins) is ``matches.lobby.budgets``.

**Frames per socket** (:class:`FrameBudget`): a token bucket of
``SOCKET_FRAME_BURST`` (20) frames, refilled at ``SOCKET_FRAMES_PER_S`` (5) a
second. A frame over it is not read: the socket gets a ``rate_limited`` error.
A socket that sends :data:`CLOSE_AFTER_REFUSED` (20) more frames without the
bucket refilling by one is closed with :data:`CLOSE_FLOOD` (4429).

**Sockets per user** (``SOCKETS_PER_USER``, 30) and **spectators per match**
(``SPECTATORS_PER_MATCH``, 200): counted per web process (each process holds its
own sockets; behind the proxy a client's sockets spread over the processes, so
the whole site allows that many per process). A socket over either is accepted
and closed with :data:`CLOSE_TOO_MANY_SOCKETS` (4430) or
:data:`CLOSE_TOO_MANY_SPECTATORS` (4431).
"""

from __future__ import annotations

import time
from collections import Counter

from django.utils.translation import gettext_noop

from matches import conf

CLOSE_FLOOD = 4429
CLOSE_TOO_MANY_SOCKETS = 4430
CLOSE_TOO_MANY_SPECTATORS = 4431
CLOSE_AFTER_REFUSED = 20


# --- frames per socket -------------------------------------------------------------


class FrameBudget:
    """A token bucket for one socket's frames (module docstring)."""

    def __init__(self) -> None:
        self.burst = float(conf.socket_frame_burst())
        self.rate = float(conf.socket_frames_per_s())
        self.tokens = self.burst
        self.at = time.monotonic()
        self.refused = 0

    def judge(self) -> str:
        """``"ok"`` (read the frame), ``"refuse"`` (answer ``rate_limited``) or ``"close"``."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.refused = 0
            return "ok"
        self.refused += 1
        return "close" if self.refused > CLOSE_AFTER_REFUSED else "refuse"


# Translated where it is sent (the socket's language).
FLOOD_MESSAGE = gettext_noop("Too many frames: slow down.")


# --- sockets per user, spectators per match (this process) -----------------------------

_sockets: Counter[int] = Counter()
_spectators: Counter[int] = Counter()


def open_socket(user_id: int, *, watching_match: int | None = None) -> int | None:
    """Count a new socket of ``user_id`` (a spectator of ``watching_match``); ``None`` if
    it fits, else the close code that refuses it. Pair with :func:`close_socket`."""
    if _sockets[user_id] >= conf.sockets_per_user():
        return CLOSE_TOO_MANY_SOCKETS
    if watching_match is not None and _spectators[watching_match] >= conf.spectators_per_match():
        return CLOSE_TOO_MANY_SPECTATORS
    _sockets[user_id] += 1
    if watching_match is not None:
        _spectators[watching_match] += 1
    return None


def close_socket(user_id: int, *, watching_match: int | None = None) -> None:
    for counter, key in ((_sockets, user_id), (_spectators, watching_match)):
        if key is None:
            continue
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]


def spectators_of(match_id: int) -> int:
    return _spectators[match_id]
