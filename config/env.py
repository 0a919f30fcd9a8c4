"""Checked readers of the environment for ``config/settings.py``.

Each reads one variable and stops the process at start-up with
``ImproperlyConfigured`` naming it when its value cannot be understood
(``DEBUG=maybe``), instead of running with a guess.
"""

from __future__ import annotations

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def envbool(name: str, default: bool) -> bool:
    """Read a yes/no variable: 1/0, true/false, yes/no, on/off (any case).

    Unset or empty gives ``default``; anything else is an error, never a guess.
    """
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a yes/no value; use one of: true, false, 1, 0, yes, no, on, off."
    )


def envint(name: str, default: int | None) -> int | None:
    """Read a whole number; unset or empty gives ``default``, anything else is an error."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None


def envstr(name: str, default: str) -> str:
    """Read a string; unset or empty gives ``default``."""
    return os.environ.get(name, "").strip() or default


def envlist(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list (``a.example,b.example``); unset or empty gives ``default``."""
    value = os.environ.get(name, "").strip()
    if not value:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """Read one of a fixed set of words; anything else is an error."""
    value = envstr(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}.")
    return value


def envrate(name: str, default: str) -> str:
    """Read a rate limit, ``count/period`` with a period of s, m, h or d (``120/m``)."""
    value = envstr(name, default)
    if not re.fullmatch(r"[1-9][0-9]*/[smhd]", value):
        raise ImproperlyConfigured(f"{name}={value!r} is not a rate such as 120/m (s, m, h or d).")
    return value


def envthreshold(name: str, default: tuple[int, int, int]) -> tuple[int, int, int] | None:
    """Read the garbage collector's three thresholds (``20000,20,10``); ``python``: its own."""
    value = envstr(name, ",".join(map(str, default)))
    if value == "python":
        return None
    parts = value.split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not three positive whole numbers such as 20000,20,10 "
            "(or python, for the interpreter's own)."
        )
    a, b, c = (int(p) for p in parts)
    return a, b, c
