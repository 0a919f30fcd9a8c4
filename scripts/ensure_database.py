"""Create the PostgreSQL database named by DATABASE_URL if it does not exist yet.

Used by the Procfile's release step so that `make run-services` works on a
machine whose PostgreSQL has never seen the project. A no-op for SQLite and
for a database that exists; it never drops or changes anything.
"""

import os
import sys

import dj_database_url
import psycopg
from psycopg import sql


def main() -> int:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        return 0
    config = dj_database_url.parse(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        return 0
    params = {
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
    }
    params = {k: v for k, v in params.items() if v is not None}
    name = config["NAME"]
    try:
        with psycopg.connect(dbname=name, connect_timeout=5, **params):
            return 0
    except psycopg.OperationalError as exc:
        if f'"{name}" does not exist' not in str(exc):
            print(f"ensure_database: cannot reach PostgreSQL: {exc}", file=sys.stderr)
            return 1
    with psycopg.connect(dbname="postgres", autocommit=True, connect_timeout=5, **params) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    print(f"ensure_database: created database {name!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
