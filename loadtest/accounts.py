"""Bulk-create the bots' users and logged-in sessions in the server's database.

Run against the server's settings and database (the same ``DATABASE_URL`` and
``SECRET_KEY``), from the repository root::

    python -m loadtest.accounts --count 2000 --prefix loadbot > accounts.json

Signing up N users through the site would cost N password hashes (each
deliberately slow), which is not what is being measured. Instead, every user
gets one precomputed hash, and a session row per user is written the way
``django.contrib.auth.login`` would fill it (``_auth_user_id``,
``_auth_user_backend`` and ``_auth_user_hash``), so each bot starts with a valid
``sessionid`` cookie. Everything after this goes over the protocol.

Users named ``<prefix>00001`` … are reused when they exist (their password is
reset to the bots' one). Prints ``[[username, sessionid], ...]`` as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import timedelta
from importlib import import_module

# The bots' password: the login flood sends a wrong one for these users.
PASSWORD = "load-harness-bot-password"


def create(count: int, prefix: str) -> list[tuple[str, str]]:
    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
        load_backend,
    )
    from django.contrib.auth.hashers import make_password
    from django.db import transaction
    from django.utils import timezone
    from django.utils.crypto import get_random_string

    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    if not hasattr(store_class, "get_model_class"):
        raise SystemExit(f"SESSION_ENGINE {settings.SESSION_ENGINE} does not keep sessions rows")
    Session = store_class.get_model_class()
    User = get_user_model()
    names = [f"{prefix}{i:05d}" for i in range(1, count + 1)]
    password = make_password(PASSWORD)  # once, for everyone
    # The backend a real log-in records: the first that can load a user (django-axes'
    # backend comes first, but it only guards log-ins and cannot).
    backend = next(
        b for b in settings.AUTHENTICATION_BACKENDS if hasattr(load_backend(b), "get_user")
    )
    expires = timezone.now() + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    with transaction.atomic():
        User.objects.bulk_create(
            [User(username=n, password=password) for n in names],
            batch_size=1000,
            ignore_conflicts=True,
        )
        # Reused users may have another hash: the session hash is derived from it.
        User.objects.filter(username__in=names).update(password=password, is_active=True)
        users = list(User.objects.filter(username__in=names).order_by("username"))
        store = store_class()
        rows, out = [], []
        for u in users:
            key = get_random_string(32, "abcdefghijklmnopqrstuvwxyz0123456789")
            data = {
                SESSION_KEY: str(u.pk),
                BACKEND_SESSION_KEY: backend,
                HASH_SESSION_KEY: u.get_session_auth_hash(),
            }
            rows.append(
                Session(session_key=key, session_data=store.encode(data), expire_date=expires)
            )
            out.append((u.username, key))
        Session.objects.bulk_create(rows, batch_size=1000)
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", default="loadbot")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    json.dump(create(args.count, args.prefix), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
