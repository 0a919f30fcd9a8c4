"""What every test gets: pytest-django, the service fixtures and the CI skip rule.

Settings come from ``config.settings`` (``DJANGO_SETTINGS_MODULE`` in
pyproject.toml), so the database is whatever ``DATABASE_URL`` says: ``make test``
points it at this machine's PostgreSQL, a bare ``pytest`` uses SQLite.

**The CI rule.** A test that needs PostgreSQL, Redis or a browser skips itself
when the service is missing on a developer's machine, but CI must never pass by
skipping them: with ``REQUIRE_SERVICES=1`` (``.ci/run`` sets it) every skip is
reported as a failure, and ``require_postgres`` / ``require_redis`` /
``require_chromium`` fail outright instead of skipping.

Fixtures:

- ``require_postgres``: the test database is PostgreSQL and reachable.
- ``require_redis``: Redis at ``TEST_REDIS_URL`` (default
  ``redis://127.0.0.1:6379/15``) answers a ping; returns that URL. Tests share
  that database, so they use their own key prefixes rather than flushing it.
- ``require_chromium``: Debian's Chromium is installed; returns its path
  (``scripts/ensure-programs.sh test`` installs it, ``make test`` runs that script).
- ``browser``: a headless Chromium (Playwright's sync API), one per test module.
  Use this one rather than a fixture of your own: Playwright allows one sync
  instance per thread, so two alive at once (say a session-scoped one from an
  earlier folder) fail with "using Playwright Sync API inside the asyncio loop".
  While it is alive the main thread has Playwright's event loop running, which
  Django would take for async code touching the ORM; the fixture allows that
  (``DJANGO_ALLOW_ASYNC_UNSAFE``) for its module only, so ``live_server`` and
  ``db`` work beside it and every other test keeps Django's check.
- ``alice``, ``bob``, ``carol``, ``dave``, ``outsider``: users of those names,
  made through ``tests.support.make_user``. They have no password unless the
  folder's conftest overrides ``user_password`` (the folders that log in do).
- ``clock``: a stopped ``time_machine`` clock at ``tests.support.START``;
  ``clock.shift(10)`` moves it 10 s on.

Plain helpers the folders share (the embedded-default settings, ``Tables``,
``frame_for``) are in ``tests/support.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Generator, Iterator
from typing import Any, NoReturn

import pytest
import time_machine

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "") or "redis://127.0.0.1:6379/15"
CHROMIUM = "/usr/bin/chromium"
# As root on a closed network: no sandbox, and none of Chromium's background calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def requiring_services() -> bool:
    """True when skips of service-backed and browser tests must fail (CI)."""
    return os.environ.get("REQUIRE_SERVICES", "").strip().lower() in {"1", "true", "yes", "on"}


def unavailable(what: str) -> NoReturn:
    """Skip the test because ``what`` is missing, or fail it under REQUIRE_SERVICES=1."""
    if requiring_services():
        pytest.fail(f"{what} (REQUIRE_SERVICES=1: this test may not be skipped)", pytrace=False)
    pytest.skip(what)


def pytest_configure(config: pytest.Config) -> None:
    if not requiring_services():
        return
    from django.conf import settings

    if not settings.configured:
        return
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        raise pytest.UsageError(
            f"REQUIRE_SERVICES=1 but the test database is {engine}: set DATABASE_URL to "
            "PostgreSQL (make test does: postgres://postgres@127.0.0.1:5432/spectacular)."
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The whole-system browser tests (tests/e2e/) run last: slowest, and the ones a
    # unit failure explains. Their session-scoped Chromium also stays alive until
    # the end, so nothing that starts another sync Playwright may run after them.
    items.sort(key=lambda item: "e2e" in item.path.relative_to(config.rootpath).parts[:2])


def _skip_reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    processes = sys.modules.get("tests.processes")  # loaded by the tests that start any
    if report.failed and processes is not None:
        for path in processes.LOGS:
            with contextlib.suppress(OSError):
                tail = path.read_text(errors="replace")[-processes.LOG_TAIL :]
                report.sections.append((f"{path.name}: the end of its log", tail))
    if call.when == "teardown" and processes is not None:
        processes.LOGS.clear()
    if requiring_services() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped under REQUIRE_SERVICES=1, which CI sets so that no service-backed "
            f"or browser test passes by skipping: {_skip_reason(report.longrepr)}"
        )
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    # A module-level skip (pytest.importorskip, allow_module_level) skips at collection.
    report = yield
    if requiring_services() and report.skipped:
        report.outcome = "failed"
        report.longrepr = (
            f"module skipped under REQUIRE_SERVICES=1: {_skip_reason(report.longrepr)}"
        )
    return report


@pytest.fixture(autouse=True)
def _match_threads_let_go() -> Iterator[None]:
    """The web process's match threads keep their connections (matches/play/db.py): after
    each test they give them back, so the test database can be flushed and dropped."""
    yield
    import sys

    computer = sys.modules.get("matches.lobby.computer")
    if computer is not None:
        # A computer's move waiting for its release time would fire in a later test,
        # its thread using this test's connections after they are gone.
        computer.shutdown(wait_s=30)
    db = sys.modules.get("matches.play.db")  # only if a test used them
    if db is not None:
        db.close_connections()
    _shared_thread_lets_go()


def _shared_thread_lets_go() -> None:
    """An async test's ``database_sync_to_async`` runs on asgiref's one shared thread,
    which keeps its connection for good: at the end of the run it was still open, and
    dropping the test database warned "being accessed by other users" (every CI run)."""
    from asgiref.sync import SyncToAsync

    shared = SyncToAsync.single_thread_executor
    if not getattr(shared, "_threads", None):
        return  # no async test has used it (nothing to close, no thread to start)
    from django.db import connections

    shared.submit(connections.close_all).result(timeout=30)


@pytest.fixture(autouse=True)
def _rate_limits_start_empty() -> None:
    """Each test starts with no sign-ups or token calls counted (the ``ratelimit`` cache
    is this process's memory in tests, kept between tests otherwise)."""
    from django.conf import settings

    if not settings.configured:  # a pytest run without Django (tests of the test rules)
        return
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    cache = caches["ratelimit"]
    if isinstance(cache, LocMemCache):  # never a shared Redis's flush
        cache.clear()


@pytest.fixture(scope="session", autouse=True)
def _static_collected() -> None:
    """Static files collected once per run, as `make run` does, so that pages name the
    hashed files of this checkout (never a stale manifest's) and WhiteNoise serves them."""
    from django.conf import settings

    if not settings.configured:
        return  # a run without Django (tests/accounts/test_ci_skip_rule.py runs one)
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)


@pytest.fixture(scope="session")
def require_postgres() -> None:
    """The test database is PostgreSQL and the server answers."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        unavailable("needs PostgreSQL: DATABASE_URL does not point at it (make test sets it)")
    import psycopg

    params = {
        "host": db.get("HOST") or "127.0.0.1",
        "port": db.get("PORT") or 5432,
        "user": db.get("USER") or None,
        "password": db.get("PASSWORD") or None,
    }
    try:
        with psycopg.connect(
            dbname="postgres",
            connect_timeout=3,
            **{k: v for k, v in params.items() if v is not None},
        ):
            pass
    except psycopg.OperationalError as exc:
        unavailable(f"needs PostgreSQL at {params['host']}:{params['port']}: {exc}")


@pytest.fixture(scope="session")
def require_redis() -> str:
    """Redis at TEST_REDIS_URL answers a ping; returns the URL."""
    import redis

    client = redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        unavailable(f"needs Redis at {TEST_REDIS_URL}: {exc}")
    finally:
        client.close()
    return TEST_REDIS_URL


@pytest.fixture
def on_redis(settings: Any, require_redis: str) -> Iterator[str]:
    """This process on the test Redis (``REDIS_URL``), under a prefix of its own
    (``LIVENESS_PREFIX``: presence, pulses, late pushes); its keys dropped after."""
    import uuid

    import redis

    prefix = f"sbtest{uuid.uuid4().hex[:8]}"
    settings.REDIS_URL = require_redis
    settings.LIVENESS_PREFIX = prefix
    yield prefix
    client = redis.Redis.from_url(require_redis)
    try:
        keys = client.keys(f"{prefix}*")
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(scope="session")
def require_chromium() -> str:
    """Debian's Chromium for Playwright; returns its path."""
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if not path:
        unavailable(f"needs Chromium at {CHROMIUM} (run scripts/ensure-programs.sh test)")
    return path


@pytest.fixture(scope="module")
def browser(require_chromium: str) -> Iterator[Any]:
    """A headless Chromium for this module's browser tests (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    allow = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(
                executable_path=require_chromium, headless=True, args=CHROMIUM_ARGS
            )
            try:
                yield chromium
            finally:
                chromium.close()
    finally:
        if allow is None:
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = allow


@pytest.fixture
def user_password() -> str | None:
    """The password the people fixtures get: none here (hashing one costs more
    than most tests); a folder whose tests log in overrides this."""
    return None


def _person(name: str, password: str | None) -> Any:
    # Imported here: this file must load without Django (tests/accounts/test_ci_skip_rule.py).
    from tests.support import make_user

    return make_user(name, password)


@pytest.fixture
def alice(db: Any, user_password: str | None) -> Any:
    return _person("alice", user_password)


@pytest.fixture
def bob(db: Any, user_password: str | None) -> Any:
    return _person("bob", user_password)


@pytest.fixture
def carol(db: Any, user_password: str | None) -> Any:
    return _person("carol", user_password)


@pytest.fixture
def dave(db: Any, user_password: str | None) -> Any:
    return _person("dave", user_password)


@pytest.fixture
def outsider(db: Any, user_password: str | None) -> Any:
    return _person("outsider", user_password)


@pytest.fixture
def clock() -> Iterator[time_machine.Traveller]:
    """A stopped clock at START; ``clock.shift(10)`` moves it 10 s on."""
    from tests.support import START

    with time_machine.travel(START, tick=False) as traveller:
        yield traveller
