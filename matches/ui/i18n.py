"""Translation for the fragments, fast: each string translated once per language.

A move's render makes dozens of gettext calls, and Django's costs several
context lookups each; the catalogues do not change while the process runs.
"""

from __future__ import annotations

import contextvars
import functools
from typing import Any

from django.core.signals import setting_changed
from django.utils import translation
from django.utils.translation import gettext
from markupsafe import Markup, escape


def translate_markup(message: str) -> Markup:
    """``_`` in the live templates: the translation, escaped, as ``Markup``.

    So ``_("%(name)s is deciding…") % {"name": name}`` escapes the name and keeps
    an argument that is already HTML (a countdown) as it is.
    """
    return Markup(escape(_(message)))


# language → msgid → translation: the catalogues do not change while the process
# runs, and Django's gettext costs several context lookups per call — a render
# makes dozens (tests that swap catalogues clear it: forget_translations).
_TRANSLATED: dict[str, dict[str, str]] = {}


# The language of the render under way (set by the entry points for their call,
# ``in_language``): asking Django each time costs more than the translation itself.
_LANGUAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar("sb_render_language")


def in_language(fn: Any) -> Any:
    """Run ``fn`` with the active language noted in ``_LANGUAGE``, and forget it after."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _LANGUAGE.set(translation.get_language() or "")
        try:
            return fn(*args, **kwargs)
        finally:
            _LANGUAGE.reset(token)

    return wrapper


def _(message: str) -> str:
    """``gettext``, remembered per language."""
    lang = _LANGUAGE.get(None) or translation.get_language() or ""
    done = _TRANSLATED.get(lang)
    if done is None:
        done = _TRANSLATED[lang] = {}
    out = done.get(message)
    if out is None:
        out = done[message] = gettext(message)
    return out


@functools.lru_cache(maxsize=8)
def translator(language: str) -> Any:
    """``_`` for one language, remembering each string it translated (the catalogue is fixed)."""
    done: dict[str, Markup] = {}

    def translate(message: str) -> Markup:
        out = done.get(message)
        if out is None:
            out = done[message] = translate_markup(message)
        return out

    return translate


def forget_translations(*, setting: str, **kwargs: Any) -> None:
    """Tests may swap the catalogues (``LOCALE_PATHS``): drop what was translated with the old."""
    if setting in ("LOCALE_PATHS", "LANGUAGE_CODE", "LANGUAGES"):
        _TRANSLATED.clear()
        translator.cache_clear()


setting_changed.connect(forget_translations, dispatch_uid="matches.ui.i18n.translations")
