"""The server restarts while it is your turn: the page is back by itself, soon, with
the time you had when the server went down.

The only web process (the embedded default) gets SIGTERM in the middle of the
player's decision and is started again on the same port 3 s later. The page
must reconnect within a few seconds of the server answering (not htmx's
default backoff, which grows to a minute), and the clock it then shows must
hold at least what was left when the server stopped: the outage, and the way
back to it, are the server's to pay (ARCHITECTURE, "Time").
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import _database_url, sign_up
from tests.processes import ROOT, WebProcess, answers, server_env, wait_for

DOWN_S = 3.0  # the outage: longer than the 2 s the tier may be silent without one
BACK_WITHIN_S = 3.0  # from the server answering again to the page's socket being back


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WebProcess]:
    env = server_env(
        DATABASE_URL=_database_url(tmp_path, "e2e_restart"),
        COMPUTER_PAUSE_MS="50,150",
        DEBUG="1",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    web = WebProcess(tmp_path, "web", env)
    try:
        yield web.start()
    finally:
        web.stop()


def _remaining(page: Any, seat: str) -> tuple[int, int]:
    """(delay left + main time, at the server's time) of ``seat``'s clock as last drawn."""
    clock = page.locator(f"[data-testid=clock-{seat}]")
    left = int(clock.get_attribute("data-delay-left") or 0) + int(clock.get_attribute("data-main"))
    return left, int(clock.get_attribute("data-server-now"))


def test_after_a_restart_in_your_turn_the_page_is_back_soon_and_no_time_is_lost(
    browser: Any, site: WebProcess
) -> None:
    ctx = browser.new_context(
        base_url=site.url, locale="ja-JP", viewport={"width": 390, "height": 844}
    )
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        sign_up(page, "ivy_e2e")
        page.click("[data-testid=computer-1]")
        page.wait_for_url("**/matches/*/")
        page.click("[data-testid=op-start]")
        # The computer pressed 開始 already: the auction starts; wait for our decision.
        page.wait_for_selector("#sb-status[data-my-turn='1']")
        seat = page.locator("#sb-status").get_attribute("data-seat")
        version = page.locator("#sb-status").get_attribute("data-version")
        left, at = _remaining(page, seat)

        stopped_ms = time.time() * 1000
        site.stop()  # SIGTERM: the page's socket is closed with 1012 (Service Restart)
        page.wait_for_selector("#sb-conn:not([hidden])")
        left_at_stop = left - (stopped_ms - at)
        time.sleep(DOWN_S)  # the outage itself (a fault injected, not a wait for work)
        site.start()
        answered = time.monotonic()
        # The whole view comes again on reconnection, credited: a newer version.
        page.wait_for_selector(
            "#sb-conn[hidden]", state="attached", timeout=int(BACK_WITHIN_S * 1000) + 2_000
        )
        back_after = time.monotonic() - answered
        assert back_after <= BACK_WITHIN_S, (
            f"the page came back {back_after:.1f} s after the server"
        )
        wait_for(
            lambda: page.locator("#sb-status").get_attribute("data-version") != version,
            5,
            "the credited view",
        )
        assert page.locator("#sb-status[data-my-turn='1']").count() == 1
        left_after, at_after = _remaining(page, seat)
        # What the page shows at the server's time is what was left when it stopped
        # (never less; the credit starts at the last beat, up to a second before).
        assert left_after >= left_at_stop - 100, (left_after, left_at_stop)
        assert answers(site.url + "/")
        outage = page.locator("[data-testid=outage]")
        assert outage.count() == 1 and outage.inner_text()
        assert at_after > at
    finally:
        ctx.close()
