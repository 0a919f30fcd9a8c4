"""The fragments' one template engine: Jinja2 over templates/matches/live/.

The fragments are the hot path (every move, every socket of an HTML page): a
profile of ``tests/ui/measure_render.py`` puts template rendering at about half
of ``render_changed``, and the same status and log fragments rendered from the
same contexts took 21 and 42 µs with Jinja2 against 83 and 188 µs with Django's
template language (4-4.5x). So the fragments stay Jinja2; the full pages, which
are not on that path, are Django templates. The board's SVG is made in Python
(``board_svg``), not by either engine.

One environment, compiled templates cached; in DEBUG they reload as they change.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from django.conf import settings
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from matches.ui.i18n import translate_markup

LIVE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "matches" / "live"


class _Environment(Environment):  # type: ignore[misc]
    """Jinja's environment, reading a dict's keys first.

    The fragments' contexts are plain dicts: ``p.name`` is ``p["name"]``. Jinja
    tries an attribute first and a key only after the attribute lookup failed,
    which on every one of a fragment's hundreds of lookups cost an exception.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@functools.cache
def jinja() -> Environment:
    env = _Environment(
        loader=FileSystemLoader(LIVE_TEMPLATES),
        autoescape=True,
        auto_reload=bool(settings.DEBUG),
        keep_trailing_newline=False,
    )
    env.globals["_"] = translate_markup
    # The macros as one module, made once: importing them in each fragment costs a
    # module per render.
    env.globals["m"] = env.get_template("_macros.html").module
    return env


@functools.lru_cache(maxsize=32)
def _template(name: str) -> Any:
    return jinja().get_template(name)


def precompile(names: list[str]) -> None:
    """Compile ``names`` now (a web process before it listens: ``config/warmup.py``)."""
    for name in names:
        _template(name)


OOB = Markup(' hx-swap-oob="true"')


def render(template: str, ctx: dict[str, Any]) -> str:
    if settings.DEBUG:  # templates reload as they change
        return jinja().get_template(template).render(ctx)
    return _template(template).render(ctx)
