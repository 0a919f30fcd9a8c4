"""The account pages in a real browser, at phone width: no sideways scrolling."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import PASSWORD

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


NARROW = {"width": 360, "height": 740}


def fits_and_taps(page: Any) -> None:
    """No sideways scrolling at 360 px, and every button and link-button at least 44 px tall."""
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
    heights = page.eval_on_selector_all(
        "main button, main .button", "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert heights and min(heights) >= 44


def test_the_404_page_at_360px(browser: Any, live_server: Any) -> None:
    page = browser.new_page(viewport=NARROW, locale="ja-JP")
    try:
        response = page.goto(live_server.url + "/no-such-page/")
        assert response is not None and response.status == 404
        assert page.locator("h1").inner_text() == "ページが見つかりません"
        fits_and_taps(page)
    finally:
        page.close()


def test_the_lockout_message_at_360px(browser: Any, live_server: Any, alice: Any) -> None:
    from axes.models import AccessAttempt
    from django.utils import timezone

    AccessAttempt.objects.create(
        username="alice",
        ip_address="127.0.0.1",
        user_agent="an earlier browser",
        failures_since_start=10,
        attempt_time=timezone.now(),
        get_data="",
        post_data="",
        http_accept="",
        path_info="/accounts/login/",
    )
    page = browser.new_page(viewport=NARROW, locale="ja-JP")
    try:
        page.goto(live_server.url + "/accounts/login/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("form.form button[type=submit]")
        alert = page.locator("[data-lockout]")
        assert "ログインの失敗が続いたため" in alert.inner_text()
        assert page.url.endswith("/accounts/login/")  # not logged in, still on the page
        fits_and_taps(page)
    finally:
        page.close()
