"""A web process compiles and imports what its first requests need before it listens.

After a restart of the web tier, the first page a process serves meets the whole
reconnect wave: its one-off work (the views' import, the templates' compilation)
done then took 200 ms of CPU on an idle machine and 2 s under the wave at 500
matches. config/warmup.py does it before the process listens.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from django.template import engines
from django.test import override_settings

from config import warmup
from matches.ui import templating
from matches.ui.fragments import FRAGMENTS


def _cached_loader() -> Any:
    (loader,) = engines["django"].engine.template_loaders
    return loader


def _site_templates() -> set[str]:
    root = Path(__file__).resolve().parents[2] / "templates"
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.suffix in (".html", ".txt")
        and "live" not in p.parts
        and not p.name.startswith("TRANSLATIONS_")
    }


@override_settings(DEBUG=False)
def test_every_page_template_and_fragment_is_compiled_before_the_first_request() -> None:
    loader = _cached_loader()
    loader.reset()
    templating._template.cache_clear()
    assert not loader.get_template_cache  # cold, as a process that has just started

    done = warmup.warm_up()

    cached = {name for name in loader.get_template_cache if isinstance(name, str)}
    assert _site_templates() <= cached, sorted(_site_templates() - cached)
    assert "registration/login.html" in cached and "base.html" in cached
    assert done["templates"] == len(_site_templates())
    fragments = {t for _fid, t in FRAGMENTS} | {"toast.html"}
    assert templating._template.cache_info().currsize == len(fragments) == done["fragments"]
    assert done["routes"] > 20 and done["languages"] == 2


def test_a_template_that_does_not_compile_is_logged_and_the_rest_still_are(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One broken page must not keep the whole site from starting."""
    (tmp_path / "templates" / "deep").mkdir(parents=True)
    (tmp_path / "templates" / "broken.html").write_text("{% if %}")
    (tmp_path / "templates" / "deep" / "fine.html").write_text("{{ 1 }}")
    django_engine = {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [tmp_path / "templates"],
        "OPTIONS": {
            "loaders": [
                (
                    "django.template.loaders.cached.Loader",
                    ["django.template.loaders.filesystem.Loader"],
                )
            ]
        },
    }
    with override_settings(BASE_DIR=tmp_path, TEMPLATES=[django_engine]):
        with caplog.at_level(logging.ERROR, logger="config.warmup"):
            done = warmup.warm_up()
        cached = set(_cached_loader().get_template_cache)
    assert done["templates"] == 1 and "deep/fine.html" in cached
    assert "template broken.html does not compile" in caplog.text


def test_the_web_process_warms_up_before_it_listens(embedded_web: Any) -> None:
    log = embedded_web.log
    assert "warmed up in" in log and "Listening on" in log
    assert log.index("warmed up in") < log.index("Listening on")
