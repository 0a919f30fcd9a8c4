"""A newcomer plays the computer (level 1) to the end of a match, by clicks alone.

Once on the embedded default (the computer decides in the web process) and once
on Redis + Celery (a web process and a real worker, whose sweeper hands the
computer's turns to the computer player). The player follows the policy of
test_browser_match: the first playable tile, the minimum in the first auction,
everything in any later one — which ends the match by balance.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, _database_url, sign_up
from tests.e2e.test_browser_match import Player, _visible
from tests.processes import Process, WebProcess

GAME_DEADLINE_S = 240


def _play_the_computer(page: Any, level: int = 1) -> None:
    page.click(f"[data-testid=computer-{level}]")
    page.wait_for_url("**/matches/*/")
    page.wait_for_selector("[data-testid=op-start]")
    # The computer has pressed 開始 already: one press starts the match.
    assert "🤖" in page.locator("[data-testid=computer-badge]").first.inner_text()
    me = Player(page)
    deadline = time.monotonic() + GAME_DEADLINE_S
    while time.monotonic() < deadline:
        if _visible(page, "[data-testid=result]"):
            break
        before = page.locator("#sb-status").get_attribute("data-version")
        acted = me.act()
        step_deadline = time.monotonic() + (15 if acted else 3)
        while time.monotonic() < step_deadline:
            if page.locator("#sb-status").get_attribute("data-version") != before:
                break
            page.wait_for_timeout(50)
    else:
        raise AssertionError("the match against the computer did not end in time")
    result = page.locator("[data-testid=result]")
    assert result.get_attribute("data-end") == "balance"
    assert me.placed > 0
    balances = [
        int(page.locator(f"[data-testid=balance-{s}]").get_attribute("data-points") or -1)
        for s in (0, 1)
    ]
    assert sorted(balances) == [0, 300]


def test_a_newcomer_plays_the_computer_to_the_end_on_the_embedded_default(
    new_page: Any,
) -> None:
    page = new_page(width=390, height=844)
    sign_up(page, "gina_e2e")
    _play_the_computer(page)


@pytest.fixture(scope="module")
def services_site(
    require_postgres: None, require_redis: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A web process and a Celery worker on Redis, on a database of their own."""
    tmp = tmp_path_factory.mktemp("e2e-services")
    tag = f"sbe2e{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(tmp, "e2e_services"),
        "REDIS_URL": require_redis,
        "MATCH_SWEEPER": "celery",
        "CHANNEL_LAYER_PREFIX": tag,
        "LIVENESS_PREFIX": tag,
        "COMPUTER_PAUSE_MS": "50,150",
        # With the computer answering in 150 ms a scripted browser plays faster than
        # any person could: the per-socket frame budget is tested in tests/trust/.
        "SOCKET_FRAMES_PER_S": "1000",
        "SOCKET_FRAME_BURST": "1000",
        "DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    worker = Process(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "threads", "-c", "4",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"],
        env,
        Path(tmp) / "worker.log",
    ).start()  # fmt: skip
    web = WebProcess(Path(tmp), "web", env)
    try:
        web.start()
        yield web.url
    finally:
        web.stop()
        worker.stop()


def test_a_newcomer_plays_the_computer_to_the_end_on_redis_and_celery(
    browser: Any, services_site: str
) -> None:
    ctx = browser.new_context(
        base_url=services_site, locale="ja-JP", viewport={"width": 1280, "height": 800}
    )
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        sign_up(page, "hank_e2e")
        _play_the_computer(page)
    finally:
        ctx.close()
