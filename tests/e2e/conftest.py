"""Browser tests: a real Daphne server and Debian's Chromium driven by Playwright.

The server runs as a subprocess exactly as ``make run`` runs it (one ASGI
process, in-memory channel layer, asyncio deadline timers), on its own
database: PostgreSQL when the test run uses it (``make test``), else SQLite.
Deals are seeded through ``SB_DEAL_SEED``, which production refuses.

On failure every open page is screenshotted into ``tests/e2e/artifacts/``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
E2E_DB_SUFFIX = "e2e"
DEAL_SEED = "20261130"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _database_url(tmp: Path, suffix: str = E2E_DB_SUFFIX) -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        base, name = url.rsplit("/", 1)
        # Named after the run's own database, so two runs side by side
        # (different DATABASE_URLs) never drop each other's.
        db = f"{name.split('?')[0] or 'spectacular'}_{suffix}"
        with psycopg.connect(base + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{db}"')
        return f"{base}/{db}"
    return f"sqlite:///{tmp / 'e2e.sqlite3'}"


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a live Daphne server with a fresh, migrated database."""
    with live_server(tmp_path_factory.mktemp("e2e")) as url:
        yield url


@contextlib.contextmanager
def live_server(
    tmp: Path, suffix: str = E2E_DB_SUFFIX, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    """A Daphne server as ``make run`` starts it, on its own fresh database; its URL."""
    env = {
        **os.environ,
        # Admission control is tested on its own (tests/matches/test_admission.py,
        # tests/e2e/test_browser_busy.py): on a loaded CI machine the embedded SQLite's
        # waits passed its 250 ms limit, and the queue's pairing and new matches of
        # tests about something else were refused (two CI runs failed so).
        "ADMISSION_DB_WAIT_MS": "5000",
        "ADMISSION_LOOP_LAG_MS": "5000",
        "ADMISSION_PUSH_DELAY_MS": "5000",
        **(extra_env or {}),
        "DATABASE_URL": _database_url(tmp, suffix),
        "SB_DEAL_SEED": DEAL_SEED,
        "COMPUTER_PAUSE_MS": "50,150",  # the computer's person-like pause, shortened
        "SIGNUP_RATE": "1000/h",  # every browser signs up from 127.0.0.1
        # With the computer answering in 150 ms a scripted browser plays faster than
        # any person could: the per-socket frame budget is tested in tests/trust/.
        "SOCKET_FRAMES_PER_S": "1000",
        "SOCKET_FRAME_BURST": "1000",
        "DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("REDIS_URL", None)
    env.pop("MATCH_SWEEPER", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    port = _free_port()
    log = open(tmp / "daphne.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        # What `make run` runs: Daphne through config/serve.py.
        [sys.executable, "-m", "config.serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                raise RuntimeError(
                    "daphne did not start:\n" + (tmp / "daphne.log").read_text()[-3000:]
                ) from None
            time.sleep(0.1)  # polling the server's start-up, with a deadline
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def new_page(
    browser: Any, server: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Any]]:
    """Open a page in a fresh browser context (its own cookies: its own player)."""
    contexts: list[Any] = []

    def make(locale: str = "ja-JP", width: int = 1280, height: int = 900) -> Any:
        ctx = browser.new_context(
            base_url=server, locale=locale, viewport={"width": width, "height": height}
        )
        ctx.set_default_timeout(10_000)
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        for i, ctx in enumerate(contexts):
            for j, page in enumerate(ctx.pages):
                # A failing screenshot must not hide the test's own failure.
                with contextlib.suppress(Exception):
                    page.screenshot(
                        path=str(ARTIFACTS / f"{request.node.name}-{i}-{j}.png"), full_page=True
                    )
    for ctx in contexts:
        ctx.close()


def sign_up(page: Any, username: str, password: str = "correct-horse-battery-9") -> None:
    """Sign up through the form, as a person would; ends logged in on the lobby."""
    page.goto("/signup/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password1]", password)
    page.fill("input[name=password2]", password)
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    page.wait_for_selector("[data-testid=create-invite]")


def start_casual_match(alice: Any, bob: Any) -> str:
    """Alice invites, Bob accepts, both press 開始; returns the match's URL once live."""
    alice.click("[data-testid=create-invite]")
    bob.goto(alice.locator("[data-testid=invite-url]").input_value())
    bob.click("[data-testid=accept-invite]")
    bob.wait_for_url("**/matches/*/")
    alice.wait_for_url("**/matches/*/", timeout=15_000)
    for page in (alice, bob):
        page.click("[data-testid=op-start]")
    for page in (alice, bob):
        page.wait_for_selector("#sb-status[data-status=live]")
    return str(bob.url)


def start_then_resign(resigner: Any, other: Any) -> list[Any]:
    """Both press 開始, then ``resigner`` resigns through the confirmation dialog.

    Returns each page's result element once both show the match ended by resignation.
    """
    for page in (resigner, other):
        page.click("[data-testid=op-start]")
    for page in (resigner, other):
        page.wait_for_selector("[data-testid=resign]:visible")
    resigner.click("[data-testid=resign]")
    resigner.wait_for_selector("[data-testid=resign-dialog][open]")
    resigner.click("[data-testid=resign-confirm]")
    results = []
    for page in (resigner, other):
        result = page.wait_for_selector("[data-testid=result]:visible")
        assert result.get_attribute("data-end") == "resign"
        results.append(result)
    return results
