"""A tap refused at the door (the server saturated: 503 + Retry-After) says so and asks
again by itself: htmx drops an error response, so the tap used to seem to do nothing
(a CI run saw 対局を探す refused on a loaded machine, and the queue never showed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import live_server, sign_up


@pytest.fixture(scope="module")
def busy_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Always saturated (a database wait over -1 ms): every new match is refused.
    env = {"ADMISSION": "1", "ADMISSION_DB_WAIT_MS": "-1", "ADMISSION_RETRY_AFTER_S": "1"}
    with live_server(tmp_path_factory.mktemp("busy"), "e2e_busy", env) as url:
        yield url


def test_a_refused_find_a_match_says_the_server_is_busy_and_retries(
    browser: Any, busy_site: str
) -> None:
    ctx = browser.new_context(base_url=busy_site, locale="ja-JP",
                              viewport={"width": 360, "height": 740})  # fmt: skip
    ctx.set_default_timeout(10_000)
    try:
        page = ctx.new_page()
        sign_up(page, "busy_e2e")
        joins: list[int] = []
        page.on(
            "response",
            lambda r: joins.append(r.status) if r.url.endswith("/queue/join/") else None,
        )
        page.click("[data-testid=queue-join]")
        note = page.locator("[data-testid=busy]")
        note.wait_for()
        assert "混雑しています" in note.inner_text()
        deadline = time.monotonic() + 10
        while len(joins) < 2:  # asked again after Retry-After (1 s here, jittered)
            assert time.monotonic() < deadline, joins
            page.wait_for_timeout(200)
        assert set(joins) == {503}
        assert page.locator("[data-testid=queue-window]").count() == 0  # never half-joined
    finally:
        ctx.close()
