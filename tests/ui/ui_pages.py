"""Helpers for the browser tests of the site's pages (rules, lobby, invite, history, replay).

The pages are served by pytest-django's ``live_server``; a player is logged in by
giving the browser context the session cookie of a Django test client. Both sizes
the brief names are here: a 360×740 touch phone and a 1280×800 desktop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings
from django.db import connections
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"
SIZES: dict[str, dict[str, Any]] = {
    "phone": {"viewport": {"width": 360, "height": 740}, "has_touch": True, "is_mobile": True},
    "desktop": {"viewport": {"width": 1280, "height": 800}},
}
# The sizes and languages a page must fit: both widths in Japanese, and a phone in
# English (its longer words are the ones that push).
FITS = [("phone", "ja-JP"), ("desktop", "ja-JP"), ("phone", "en-US")]
INTERACTIVE = "a, button, input:not([type=hidden]), select, summary, [role=button]"
TAP = 44  # px, both ways

T = TypeVar("T")

# What a board (templates/board/_board.html) inside an element draws: the tiles, the one
# marked as just placed, the counted-end numbers, and how many positions have a dot.
BOARD_DRAWN = """(root) => {
  const all = (sel) => Array.from(root.querySelectorAll(sel));
  return {
    tiles: all(".board svg g.domino").map((g) => g.dataset.tile),
    last: all(".board svg g.domino.is-last").map((g) => g.dataset.tile),
    numbers: all(".board svg text.pos__num").map((t) => t.textContent),
    dots: all(".board svg g.pos").length,
  };
}"""

# Every visible interactive element smaller than a full touch target, described.
_SMALL = """([sel, tap]) => Array.from(document.querySelectorAll(sel)).flatMap((e) => {
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") return [];
  if (r.width >= tap - 0.01 && r.height >= tap - 0.01) return [];
  const what = (e.innerText || e.value || e.getAttribute("aria-label") || "").trim().slice(0, 30);
  return [`${e.tagName.toLowerCase()} "${what}" ${r.width.toFixed(1)}×${r.height.toFixed(1)}`];
})"""


def off_the_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` in a thread of its own and return its result.

    While the browser is open, Playwright's event loop runs on the test's thread,
    where the services' ``async_to_sync`` pushes (on commit) refuse to run; the
    live server's threads, like this one, have no loop.
    """
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as e:  # re-raised on the test's thread
            out["error"] = e
        finally:
            connections.close_all()  # this thread's own; left open, they outlive the test DB

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]  # type: ignore[no-any-return]


def new_context(
    browser: Any, live_server: Any, size: str, user: Any = None, locale: str = "ja-JP"
) -> Any:
    """A browser context at ``size`` (``"phone"``/``"desktop"``), logged in as ``user``;
    Japanese unless another ``locale`` is asked for (the site follows the browser's)."""
    ctx = browser.new_context(base_url=live_server.url, locale=locale, **SIZES[size])
    ctx.set_default_timeout(10_000)
    if user is not None:
        client = Client()
        off_the_loop(client.force_login, user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        ctx.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
        )
    return ctx


@contextmanager
def browsing(
    browser: Any, live_server: Any, size: str, user: Any = None, locale: str = "ja-JP"
) -> Iterator[Any]:
    """A page in a context of its own (``new_context``), closed afterwards."""
    ctx = new_context(browser, live_server, size, user, locale)
    try:
        yield ctx.new_page()
    finally:
        ctx.close()


def small_targets(page: Any) -> list[str]:
    """Visible interactive elements under 44×44 px (every ``<details>`` opened first)."""
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    return list(page.evaluate(_SMALL, [INTERACTIVE, TAP]))


def scrolls_sideways(page: Any) -> bool:
    """Wider than the window it was opened in.

    Not ``innerWidth``: a mobile browser widens its layout viewport to the content (a
    360 px phone page 8 px too wide reports ``innerWidth`` 368 and zooms out).
    """
    width = page.viewport_size["width"]
    return bool(page.evaluate("(w) => document.documentElement.scrollWidth > w", width))


# What sticks out past the right edge, described (for the failure message): elements,
# and text that runs out of its box (a name with nowhere to break), unless clipped.
WIDER = """(w) => {
  const clipped = (e) => {
    for (; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== "visible") return true;
    }
    return false;
  };
  const name = (e) => e.tagName.toLowerCase() + "." + e.className;
  const right = (e) => e.getBoundingClientRect().right;
  const out = Array.from(document.querySelectorAll("body *"))
    .filter((e) => right(e) > w + 1 && getComputedStyle(e).position !== "fixed")
    .slice(0, 3)
    .map((e) => name(e) + " → " + Math.round(right(e)));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n && out.length < 6; n = walker.nextNode()) {
    if (!n.textContent.trim() || clipped(n.parentElement)) continue;
    range.selectNodeContents(n);
    const end = Math.max(0, ...Array.from(range.getClientRects()).map((b) => b.right));
    if (end > w + 1) out.push("text in " + name(n.parentElement) + " → " + Math.round(end));
  }
  return out;
}"""


def fit_problems(
    browser: Any, live_server: Any, size: str, locale: str, pages: list[tuple[str, Any, str]]
) -> list[str]:
    """Each ``(name, user, path)`` opened at ``size`` in ``locale`` (a screenshot kept as
    ``name-size[-lang]``): what is wider than the window (and what sticks out), what is
    under a full touch target, and which request failed (the WebSocket aside: the test
    server has none)."""
    problems: list[str] = []
    for name, user, path in pages:
        with browsing(browser, live_server, size, user, locale) as page:
            failed: list[str] = []
            page.on("response", lambda r, f=failed: r.status >= 400 and f.append(r.url))
            response = page.goto(path)
            assert response is not None and response.status == 200, (name, response)
            page.wait_for_load_state("load")
            assert page.locator("html").get_attribute("lang") == locale[:2]
            screenshot(page, f"{name}-{size}" + ("" if locale == "ja-JP" else f"-{locale[:2]}"))
            width = page.viewport_size["width"]
            if scrolls_sideways(page):
                problems.append(f"{name}: wider than {width} px: {page.evaluate(WIDER, width)}")
            problems += [f"{name}: {what}" for what in small_targets(page)]
            problems += [f"{name}: {url} failed" for url in failed if "/ws/" not in url]
    return problems


def built_site(settings: Any, build: Callable[[], T]) -> T:
    """``build()``'s players and matches, on the embedded default with fast hashing and
    every match rated (the fair-play rules are tests/trust/'s)."""
    from tests.support import FAST_HASHERS, use_embedded_default

    use_embedded_default(settings, deal_seed=5)
    settings.PASSWORD_HASHERS = FAST_HASHERS
    settings.RATED_MIN_DECISIONS, settings.RATED_PAIR_LIMIT = 0, 10**6
    return off_the_loop(build)


def screenshot(page: Any, name: str) -> None:
    """Keep a full-page screenshot in tests/e2e/artifacts/ (written on every run)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
