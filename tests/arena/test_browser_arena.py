"""Two players in an arena, in two browsers: join, paired, a short match, standings move.

A real web process as ``make run`` starts it (the embedded default: the arena's
pairing pass and standings pushes run on its own loop), on a database of its own;
the arena is made there through the Django shell, as staff would in the admin.
Pages at 360×740 and 1280×800.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import _database_url, sign_up
from tests.processes import ROOT, WebProcess, server_env
from tests.ui.ui_pages import scrolls_sideways, small_targets

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@pytest.fixture
def site(tmp_path: Path, require_chromium: str) -> Iterator[tuple[WebProcess, int]]:
    env = server_env(
        DATABASE_URL=_database_url(tmp_path, "e2e_arena"),
        DEBUG="1",
        ARENA_REST_S="12",  # the rest after a match: room for the checks on the arena page
        # A page away for a moment (the test that closes one) is not paused, however
        # slow the machine is at signing the other player up meanwhile.
        ARENA_PAUSE_GRACE_S="120",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    made = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from datetime import timedelta; from django.utils import timezone; "
            "from tournaments.services import create_arena; "
            "print(create_arena('E2E アリーナ', 60, timezone.now() - timedelta(seconds=5),"
            " True).pk)",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    arena_id = int(made.stdout.strip().splitlines()[-1])
    web = WebProcess(tmp_path, "web", env)
    try:
        yield web.start(), arena_id
    finally:
        web.stop()


def _page(browser: Any, url: str, width: int, height: int) -> Any:
    ctx = browser.new_context(
        base_url=url, locale="ja-JP", viewport={"width": width, "height": height}
    )
    ctx.set_default_timeout(20_000)
    return ctx.new_page()


def _fits(page: Any) -> None:
    """Nothing is wider than the screen, and every target is a full touch target."""
    wide = page.evaluate(
        "Array.from(document.querySelectorAll('body *')).filter(e => "
        "e.getBoundingClientRect().right > innerWidth + 1).slice(0, 5)"
        ".map(e => e.tagName + '.' + e.className + ' '"
        " + Math.round(e.getBoundingClientRect().right))"
    )
    assert not scrolls_sideways(page), (page.url, wide)
    assert small_targets(page) == [], page.url


def test_two_players_join_are_paired_play_and_see_the_standings_move(
    browser: Any, site: tuple[WebProcess, int]
) -> None:
    web, arena_id = site
    wide = _page(browser, web.url, 1280, 800)
    narrow = _page(browser, web.url, 360, 740)
    pages = {"gin_e2e": wide, "hana_e2e": narrow}
    try:
        for name, page in pages.items():
            sign_up(page, name)
            page.click("[data-testid=lobby-arenas-link]")
            page.wait_for_selector("[data-testid=arena-list]")
            _fits(page)
            page.click(f"[data-testid=arenas-running] [data-arena='{arena_id}'] a")
            page.wait_for_selector("[data-testid=arena-countdown]")
            assert page.locator("[data-testid=arena-countdown-label]").inner_text() == "終了まで"
            _fits(page)
            page.click("[data-testid=arena-join]")
            if name == "gin_e2e":  # (the second may be paired before the table is drawn)
                page.wait_for_selector(f"#arena-rows tr[data-player='{name}']")
                assert page.locator("[data-testid=arena-me]").get_attribute("data-state") == (
                    "waiting"
                )
        # The pairing pass (every 2 s) sends both to the same match.
        for page in pages.values():
            page.wait_for_url(re.compile(r".*/matches/\d+/$"), timeout=20_000)
        assert wide.url == narrow.url
        for page in pages.values():
            page.wait_for_selector("[data-testid=arena-back]")
            # Berserk is offered next to 開始, in the start overlay.
            page.wait_for_selector(".sb-overlay [data-testid=arena-berserk]:visible")
            _fits(page)
        # gin goes berserk before 開始: 60 s of main time, one point more for the win.
        wide.click("[data-testid=arena-berserk]")
        wide.wait_for_selector("[data-testid=arena-berserk]:has-text('60')")
        for page in pages.values():
            page.click("[data-testid=op-start]")
        for page in pages.values():
            page.wait_for_selector("[data-testid=resign]:visible")
        narrow.click("[data-testid=resign]")
        narrow.wait_for_selector("[data-testid=resign-dialog][open]")
        narrow.click("[data-testid=resign-confirm]")
        for page in pages.values():
            page.wait_for_selector("[data-testid=result]:visible")
        for page in pages.values():
            # Back to the arena by itself a few seconds later, before the next pairing.
            page.wait_for_url(f"**/tournaments/{arena_id}/", timeout=15_000)
        for page in pages.values():
            row = page.locator("#arena-rows tr").first
            assert row.get_attribute("data-player") == "gin_e2e"
            assert row.locator("td").nth(3).inner_text() == "3"  # 2 for the win + 1 berserk
            _fits(page)
        ARTIFACTS.mkdir(exist_ok=True)
        wide.screenshot(path=str(ARTIFACTS / "arena-1280.png"), full_page=True)
        narrow.screenshot(path=str(ARTIFACTS / "arena-360.png"), full_page=True)
        # Only two wait: they meet again, and both pages follow the new pairing.
        first = wide.url
        for page in pages.values():
            page.wait_for_url(re.compile(r".*/matches/\d+/$"), timeout=20_000)
        assert wide.url == narrow.url != first
        narrow.wait_for_selector(".sb-overlay [data-testid=arena-berserk]:visible")
        wide.screenshot(path=str(ARTIFACTS / "arena-match-1280.png"))
        narrow.screenshot(path=str(ARTIFACTS / "arena-match-360.png"))
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        for name, page in pages.items():
            page.screenshot(path=str(ARTIFACTS / f"failed-{name}.png"), full_page=True)
        raise
    finally:
        for page in pages.values():
            page.context.close()


def test_a_pairing_made_while_the_page_was_away_is_followed_once_when_it_comes_back(
    browser: Any, site: tuple[WebProcess, int]
) -> None:
    """A pairing push reaches only the sockets open at the time: a player whose arena page
    was reloading (after 参加) or closed for a moment is sent to the match by the page's
    next connection, once; coming back to the arena page on purpose then stays there."""
    web, arena_id = site
    gin = _page(browser, web.url, 360, 740)
    hana = _page(browser, web.url, 1280, 800)
    arena_url = f"{web.url}/tournaments/{arena_id}/"
    try:
        for name, page in (("gin_away", gin), ("hana_here", hana)):
            sign_up(page, name)
            page.goto(arena_url)
            page.click("[data-testid=arena-join]")
            page.wait_for_selector(f"#arena-rows tr[data-player='{name}']")
            if page is gin:
                page.goto("about:blank")  # away (its socket closed) well inside the grace
        hana.wait_for_url(re.compile(r".*/matches/\d+/$"), timeout=20_000)
        gin.goto(arena_url)
        gin.wait_for_url(hana.url)
        gin.wait_for_selector("#sb-status")
        gin.goto(arena_url)  # back to look at the table: not sent away again
        gin.wait_for_selector("#arena[data-synced]")
        assert gin.url == arena_url
        assert gin.locator("[data-testid=arena-me]").get_attribute("data-state") == "playing"
        assert gin.locator("[data-testid=arena-current-match]").get_attribute("href") == (
            hana.url.removeprefix(web.url)
        )
    finally:
        for page in (gin, hana):
            page.context.close()
