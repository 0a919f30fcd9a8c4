"""A web process does its first requests' one-off work before it listens.

A process's first page and first sockets import the views (Django imports the
URLconf on the first request), load the catalogues of each language and compile
the templates they use: about 200 ms of CPU for the first login page on an
idle machine of this kind, against 10–30 ms for the next. After a restart of the
web tier that first request meets the reconnect wave — 1,000 handshakes at 500
matches, each wanting the interpreter's lock too —, and the page the proxy and
the operator's health check ask for was answered 2 s after the process listened
(the drill at 500 matches). Done here, before listening, nothing competes with it.

Nothing here reads or writes the database, the cache or the channel layer: it is
the same code's import and compilation, not a request.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from django.conf import settings

log = logging.getLogger("config.warmup")


def warm_up() -> dict[str, int]:
    """Import the views, load every language's catalogue and compile every template;
    what was done, counted (a template that does not compile is logged, not raised:
    one broken page must not keep the whole site from starting)."""
    started = time.perf_counter()
    done = {
        "routes": _routes(),
        "languages": _catalogues(),
        "templates": _django_templates(),
        "fragments": _fragments(),
    }
    log.info(
        "warmed up in %.2f s: %s",
        time.perf_counter() - started,
        ", ".join(f"{n} {what}" for what, n in done.items()),
    )
    return done


def _routes() -> int:
    """The URLconf and every view module it names (Django imports them on the first request)."""
    from django.urls import get_resolver

    resolver = get_resolver()
    return len(resolver.reverse_dict)  # reading it populates the resolver: every include


def _catalogues() -> int:
    from django.utils import translation

    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            translation.gettext("Log in")
    return len(settings.LANGUAGES)


def _django_templates() -> int:
    """Every page template of the site's own directory, compiled into the cached loader
    (the parents they extend and the parts they include are among them)."""
    from django.template import TemplateSyntaxError
    from django.template.loader import get_template

    from matches.ui.templating import LIVE_TEMPLATES as live  # the fragments: Jinja's (below)

    root = Path(settings.BASE_DIR) / "templates"
    count = 0
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".html", ".txt") or live in path.parents:
            continue
        if path.name.startswith("TRANSLATIONS_"):
            continue  # the translators' notes, not templates
        try:
            get_template(str(path.relative_to(root)))
            count += 1
        except TemplateSyntaxError:
            log.exception("template %s does not compile", path.relative_to(root))
    return count


def _fragments() -> int:
    """The match page's fragments (Jinja, compiled once and cached)."""
    from matches.ui.fragments import FRAGMENTS
    from matches.ui.templating import precompile

    names = [template for _fid, template in FRAGMENTS] + ["toast.html"]
    precompile(names)
    return len(names)
