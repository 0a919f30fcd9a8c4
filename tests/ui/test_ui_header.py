"""The header on every page: one row of the mark, the bell, the account's name and the
language, then the site's sections; a long name is cut, never the screen widened.

The account's name opens its menu (profile, settings, log out). The menu closes as
menus do: on a tap elsewhere, on Escape (focus back on the name), and its items are
full touch targets inside the screen.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest
from ui_pages import FITS, browsing, off_the_loop, scrolls_sideways, small_targets

from tests.support import FAST_HASHERS, PASSWORD, make_user, use_embedded_default

LONGEST = "スペクタキュラー" * 18 + "_" * 6  # 150 characters, the most a name may have

# Each of the header's parts: its box, as [left, top, right, bottom].
PARTS = """() => Object.fromEntries(
  ["site-name", "site-nav", "site-account", "lang-switch"].map((c) => {
    const r = document.querySelector("." + c).getBoundingClientRect();
    return [c, [r.left, r.top, r.right, r.bottom]];
  }))"""


@pytest.fixture
def players(transactional_db: Any, settings: Any) -> dict[str, Any]:
    use_embedded_default(settings, deal_seed=5)
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return off_the_loop(
        lambda: {"short": make_user("alice", PASSWORD), "long": make_user(LONGEST, PASSWORD)}
    )


@pytest.mark.parametrize(("size", "locale"), FITS)
@pytest.mark.parametrize("who", ["short", "long"])
def test_the_header_keeps_to_its_rows_whatever_the_name(
    browser: Any, live_server: Any, players: dict[str, Any], size: str, locale: str, who: str
) -> None:
    with browsing(browser, live_server, size, players[who], locale) as page:
        page.goto("/rules/")
        width = page.viewport_size["width"]
        parts = page.evaluate(PARTS)
        assert not scrolls_sideways(page)
        for name, (left, _top, right, _bottom) in parts.items():
            assert left >= 0 and right <= width, (name, left, right)
        # The mark, the account and the language share the first row (the name cut
        # with an ellipsis); a phone puts the site's sections on a second row.
        tops = {name: box[1] for name, box in parts.items()}
        first_row = max(tops["site-name"], tops["site-account"], tops["lang-switch"])
        assert first_row < 8, tops
        if size == "phone":
            assert tops["site-nav"] >= 44, tops
        else:
            assert tops["site-nav"] < 8, tops
        name = page.locator("summary.site-account__user")
        assert name.get_attribute("title") == players[who].username
        if who == "long":
            assert name.evaluate("e => e.scrollWidth > e.clientWidth")  # cut, not wrapped
            assert name.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_name_opens_the_account_menu_and_it_closes_as_menus_do(
    browser: Any, live_server: Any, players: dict[str, Any], size: str
) -> None:
    user = players["long"]
    with browsing(browser, live_server, size, user) as page:
        page.goto("/")
        menu = page.locator("[data-testid=account-menu]")
        items = menu.locator(".account-menu__panel a, .account-menu__panel button")
        assert not items.first.is_visible()  # shut until asked

        page.click("summary.site-account__user")
        assert items.all_inner_texts() == ["プロフィール", "設定", "ログアウト"]
        width = page.viewport_size["width"]
        for box in (items.nth(i).bounding_box() for i in range(items.count())):
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
            assert box["width"] >= 44 and box["height"] >= 44
        assert small_targets(page) == []
        assert not scrolls_sideways(page)

        page.keyboard.press("Escape")
        assert not items.first.is_visible()
        assert page.evaluate("document.activeElement.matches('summary.site-account__user')")

        page.click("summary.site-account__user")
        page.locator(".site-footer").click()  # a tap elsewhere
        assert not items.first.is_visible()

        page.click("summary.site-account__user")
        page.click("text=プロフィール")
        page.wait_for_url(lambda url: unquote(url).endswith(f"/u/{user.username}/"))
        page.click("summary.site-account__user")
        page.click("text=設定")
        page.wait_for_url("**/settings/")
        page.click("summary.site-account__user")
        page.click(".account-menu__panel button[type=submit]")
        page.wait_for_selector(".site-account__signup")  # logged out: 新規登録 in its place
        assert page.locator("[data-testid=account-menu]").count() == 0
