"""The secret key of a machine that was given none: made once, kept in a file outside git.

``make run`` must be safe with nothing set, so it cannot fall back on a key
printed in the repository (anyone could forge its sessions and CSRF tokens).
The first process to start writes a fresh random key to ``var/secret_key``
(mode 600); every later process, and every process started at the same moment,
reads that same file, so sessions survive restarts and all agree.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Django's check --deploy wants at least 50 characters and 5 distinct ones.
KEY_BYTES = 48  # 64 characters of URL-safe base64


def read_or_create(path: Path) -> str:
    """Return the key kept at ``path``, creating it first if there is none.

    Creation is atomic: the key is written whole to a private temporary file,
    then hard-linked to ``path``. ``link`` fails if ``path`` exists, so when
    several processes start at once exactly one link wins and all of them read
    the winner's key; nobody ever reads a half-written file.
    """
    key = _read(path)
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_urlsafe(KEY_BYTES) + "\n")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):  # another process won: use its key
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    key = _read(path)
    if not key:
        raise ImproperlyConfigured(f"The secret key file {path} is empty; delete it or fix it.")
    return key


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ImproperlyConfigured(
            f"Cannot read the secret key file {path}: {exc}. Fix it, or set SECRET_KEY."
        ) from None
