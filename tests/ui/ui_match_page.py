"""The match page in Chromium without a server: rendered from a view, opened from a file.

``write_page`` renders ``templates/matches/match.html`` for a view (its CSS and script
from the working tree); ``FAKE_SOCKET`` stands in for htmx's socket (match.js only
needs its ``send``); ``swap_in`` does what htmx's ws extension does with a pushed view.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation

from matches.ui import fragments as render

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"

FAKE_SOCKET = """
window.sent = [];
document.dispatchEvent(new CustomEvent("htmx:wsOpen", {detail: {socketWrapper: {
  send: function (m) { window.sent.push(JSON.parse(m)); }
}}}));
"""


def write_page(view: dict[str, Any], path: Path, lang: str = "en") -> str:
    with translation.override(lang):
        html = render_to_string("matches/match.html", render.page_context(view))
    # The working tree's files, under their plain names (pages name hashed copies).
    html = re.sub(
        r'"/static/((?:css|js)/[\w/.-]+?)(?:\.[0-9a-f]{12})?\.(css|js)"',
        lambda m: f'"file://{ROOT}/static/{m[1]}.{m[2]}"',
        html,
    )
    # No htmx here: the fake socket replaces its ws extension.
    html = re.sub(r'<script src="/static/django_htmx[^"]*"[^>]*></script>', "", html)
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


FRAMES = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(
  () => requestAnimationFrame(r))))"""


def load(page: Any, view: dict[str, Any], path: Path, lang: str = "en") -> Any:
    """Open ``view`` as the page in ``page``, with the fake socket open."""
    page.goto(write_page(view, path, lang))
    page.wait_for_load_state("load")
    page.evaluate(FAKE_SOCKET)
    # match.js fits the stage and the board's hit circles in ResizeObserver callbacks,
    # which run in the next frame's rendering steps, before it is painted: measure the
    # page as it is painted (three frames: the stage's fit, then the board's, which
    # may wait for the next frame when the stage's moved it).
    page.evaluate(FRAMES)
    return page


def keep_if_failed(request: Any, pages: list[Any]) -> None:
    """A screenshot of each page in tests/e2e/artifacts/ when the test failed."""
    failed = getattr(request.node, "rep_call", None)
    if failed is None or not failed.failed:
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for i, page in enumerate(pages):
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-{i}.png"), full_page=True)


def swap_in(
    page: Any, view: dict[str, Any], lang: str = "en", sent: dict[str, str] | None = None
) -> str:
    """What htmx's ws extension does with a pushed view: swap the fragments, then the event
    (with the message in its detail). ``sent``: what the socket sent before, as the consumer
    keeps it (only the fragments that changed are pushed); returns the message."""
    with translation.override(lang):
        html = render.render_changed(view, {} if sent is None else sent)
    page.evaluate(
        """html => {
          const t = document.createElement("template");
          t.innerHTML = html;
          for (const el of Array.from(t.content.children)) {
            document.getElementById(el.id).replaceWith(el);
          }
          document.dispatchEvent(new CustomEvent("htmx:wsAfterMessage", {detail: {message: html}}));
        }""",
        html,
    )
    return html


def sent(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate("window.sent"))
