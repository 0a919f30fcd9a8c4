"""The pages HAProxy answers with when no web process can take a request.

``python -m config.proxy_errors`` renders ``templates/proxy_error.html`` (Japanese
first, then English, through the site's translations) into ``deploy/errors/<status>.http``,
the raw HTTP responses ``deploy/haproxy.cfg`` names with ``errorfile``: HAProxy's own
page was English only and said nothing of the match. 503: no process is up (a restart
of the whole tier); 502: the process died while answering. Each asks to be tried again
(``Retry-After``, and the page reloads itself) and is never cached.

The files are committed; ``tests/webtier/test_proxy_errors.py`` fails when they differ
from what this renders now (after a change of the template or the translations, run
this again).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

RETRY_AFTER_S = 5
REASONS = {502: "Bad Gateway", 503: "Service Unavailable"}
LANGUAGES = ("ja", "en")  # the page's order: Japanese first
DIRECTORY = Path(__file__).resolve().parent.parent / "deploy" / "errors"


def render(status: int) -> bytes:
    """The raw HTTP response for ``status`` (headers with CRLF, then the page)."""
    from django.template.loader import render_to_string
    from django.utils import translation
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext

    sections = []
    for language in LANGUAGES:
        with translation.override(language):
            sections.append(mark_safe(render_to_string("_proxy_error_section.html")))  # noqa: S308
    with translation.override(LANGUAGES[0]):
        site = gettext("Spectacular Bid")
        # Outside the f-string, where xgettext (make messages) finds it.
        restarting = gettext("Restarting")
        title = f"{restarting} · {site}"
    body = render_to_string(
        "proxy_error.html",
        {
            "sections": sections,
            "site": site,
            "title": title,
            "status": status,
            "retry_after": RETRY_AFTER_S,
        },
    ).encode()
    head = [
        f"HTTP/1.1 {status} {REASONS[status]}",
        "Content-Type: text/html; charset=utf-8",
        f"Content-Length: {len(body)}",
        f"Retry-After: {RETRY_AFTER_S}",
        "Cache-Control: no-store",
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'",
        "X-Content-Type-Options: nosniff",
        "Connection: close",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def path(status: int) -> Path:
    return DIRECTORY / f"{status}.http"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    for status in REASONS:
        path(status).write_bytes(render(status))
        print(f"wrote {path(status)}", file=sys.stderr)


if __name__ == "__main__":
    main()
