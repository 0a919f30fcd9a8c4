"""The pages work under the Content-Security-Policy, and the browser reports no violation.

A newcomer signs up, makes an invite (its link selects itself on a tap:
static/js/page.js), plays the computer for a few decisions (the match socket
and htmx swaps), opens the rules sheet (match.js), resigns, steps through the
replay with the arrow key (replay.js and htmx), and opens the rules page and
their profile. Chromium reports every policy violation on the console and as a
``securitypolicyviolation`` event; there must be none, and no complaint about
the Permissions-Policy header either.
"""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.conftest import sign_up
from tests.e2e.test_browser_match import Player, _visible

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${where}`);
});
"""


class Watched:
    """A page whose policy complaints are collected across its navigations."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        page.context.add_init_script(WATCH)
        page.on("console", self._on_console)

    def _on_console(self, msg: Any) -> None:
        text = str(msg.text)
        if "Content Security Policy" in text or "Permissions-Policy" in text:
            self.console.append(text)

    def assert_clean(self, where: str) -> None:
        events = self.page.evaluate("window.__violations || []")
        assert (self.console, events) == ([], []), where


def test_the_pages_work_under_the_policy_with_no_violation(new_page: Any) -> None:
    page = new_page(width=390, height=844)
    w = Watched(page)
    sign_up(page, "csp_e2e")
    w.assert_clean("lobby")

    # An invite: its link field selects all of itself on a tap (page.js, no onclick=).
    page.click("[data-testid=create-invite]")
    field = page.wait_for_selector("[data-testid=invite-url]")
    field.click()
    selected = page.evaluate(
        "(() => { const f = document.querySelector('[data-testid=invite-url]');"
        " return f.selectionEnd - f.selectionStart === f.value.length && f.value.length > 0; })()"
    )
    assert selected
    w.assert_clean("invite page")

    # The computer, a few decisions in: the socket and htmx keep the page live.
    page.goto("/")
    page.click("[data-testid=computer-1]")
    page.wait_for_url("**/matches/*/")
    page.wait_for_selector("[data-testid=op-start]")
    me = Player(page)
    first = int(page.locator("#sb-status").get_attribute("data-version") or 0)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        version = int(page.locator("#sb-status").get_attribute("data-version") or 0)
        if version >= first + 4 or _visible(page, "[data-testid=result]"):
            break
        me.act()
        page.wait_for_timeout(100)
    assert int(page.locator("#sb-status").get_attribute("data-version") or 0) >= first + 4
    page.click("[data-testid=open-rules]")
    page.wait_for_selector("#sb-rules[open]")
    w.assert_clean("match page, mid-match")
    page.keyboard.press("Escape")

    # Resign, then the replay: → steps forward through htmx.
    if not _visible(page, "[data-testid=result]"):
        page.click("[data-testid=resign]")
        page.wait_for_selector("[data-testid=resign-dialog][open]")
        page.click("[data-testid=resign-confirm]")
    page.wait_for_selector("[data-testid=result]:visible")
    page.click("[data-testid=replay-link]")
    page.wait_for_url("**/replay/")
    pos = page.locator("[data-testid=replay-pos]")
    before = pos.inner_text()
    page.keyboard.press("ArrowRight")
    deadline = time.monotonic() + 10
    while pos.inner_text() == before and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert pos.inner_text() != before
    w.assert_clean("replay")

    page.goto("/rules/")
    page.wait_for_selector("main")
    w.assert_clean("rules")
    page.goto("/u/csp_e2e/")
    page.wait_for_selector("main")
    w.assert_clean("profile")


def test_an_inline_script_would_be_refused(new_page: Any) -> None:
    """The policy is enforced, not only sent: a script written into a page does not run."""
    page = new_page()
    w = Watched(page)
    page.goto("/rules/")
    page.evaluate(
        "(() => { const s = document.createElement('script');"
        " s.textContent = 'window.__ran = true'; document.body.append(s); })()"
    )
    page.wait_for_function("window.__violations.length > 0")  # reported asynchronously
    assert page.evaluate("window.__ran === undefined")
    assert any("script-src" in v for v in page.evaluate("window.__violations"))
    deadline = time.monotonic() + 10
    while not w.console and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert w.console  # Chromium said so on the console too
