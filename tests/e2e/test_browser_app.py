"""The web app's service worker is installed once the page has settled (static/js/shell.js).

It waits for the page's load plus a few seconds (on a phone its start is otherwise
among the first seconds' longest tasks); then the shell is cached for the next
visit and Web Push has its worker.
"""

from __future__ import annotations

from typing import Any

REGISTERED = "() => navigator.serviceWorker.getRegistration('/').then((r) => !!(r && r.active))"


def test_the_service_worker_is_installed_after_the_page_settles(new_page: Any) -> None:
    page = new_page(width=360, height=740)
    page.goto("/")
    assert page.evaluate(REGISTERED) is False  # not during the page's first seconds
    page.wait_for_function(REGISTERED, timeout=20_000)  # polled: installed soon after
