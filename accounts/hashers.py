"""Password hashing that cannot starve live matches of CPU.

Django's PBKDF2 costs about half a second of CPU per log-in (on purpose: it
makes stolen hashes expensive to guess). In the web process each log-in ran
on its own request thread, so a flood of log-ins from a few clients kept both
cores busy hashing and a live match's moves waited behind them (round trip
20 ms → 256 ms p50).

``PBKDF2PasswordHasher`` here hashes exactly as Django's does (same algorithm
name, iterations, salt and stored format: every existing hash still verifies,
and Django's own hasher verifies the new ones), but the key derivation runs on
a small pool of dedicated threads (``PASSWORD_HASH_THREADS``, one by default)
that lower their own CPU priority to the lowest (nice 19, Linux). So at most
that many hashes run at once per process, the rest wait without using CPU, and
while any other thread wants a core, the scheduler gives it to that thread
first. A log-in during a flood is slower; a match is not.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.contrib.auth import hashers

LOWEST_PRIORITY = 19  # the highest nice value: runs only when nothing else wants the core


def _lower_own_priority() -> None:
    # On Linux, PRIO_PROCESS with a thread id sets the niceness of that one
    # thread, not of the whole process. Elsewhere there is no per-thread
    # niceness; the pool still bounds how many hashes run at once.
    if hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST_PRIORITY)


class _Pool:
    """One executor per process, made on first use (Celery's workers fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._executor: ThreadPoolExecutor | None = None

    def get(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(
                    max_workers=max(1, int(getattr(settings, "PASSWORD_HASH_THREADS", 1))),
                    thread_name_prefix="password-hash",
                    initializer=_lower_own_priority,
                )
                self._pid = os.getpid()
            return self._executor


pool = _Pool()


class PBKDF2PasswordHasher(hashers.PBKDF2PasswordHasher):
    """Django's PBKDF2-SHA256, computed on the low-priority hashing pool.

    ``encode`` is the one place Django derives a key: ``make_password``,
    ``check_password`` (``verify``), the dummy hash for unknown usernames and
    ``harden_runtime`` all go through it.
    """

    def encode(self, password: str, salt: str, iterations: int | None = None) -> str:
        return pool.get().submit(super().encode, password, salt, iterations).result()
