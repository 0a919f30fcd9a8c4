"""The account pages in a real browser, at phone width: no sideways scrolling."""

from __future__ import annotations

from typing import Any

import pytest

PHONE = {"width": 375, "height": 740}


@pytest.mark.parametrize("path", ["/accounts/login/", "/signup/"])
def test_account_pages_fit_a_phone(browser: Any, live_server: Any, path: str) -> None:
    page = browser.new_page(viewport=PHONE, locale="ja-JP")
    try:
        page.goto(live_server.url + path)
        assert page.locator("h1").first.inner_text() in ("ログイン", "新規登録")
        # The stylesheet loaded: the header has its colour, not the browser default.
        header_bg = page.eval_on_selector(
            ".site-header", "e => getComputedStyle(e).backgroundColor"
        )
        assert header_bg not in ("rgba(0, 0, 0, 0)", "transparent")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        page.close()
