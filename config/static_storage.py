"""Static files: content-hashed names when collected, plain names when not.

``manage.py collectstatic`` (run by ``make run``, the release step and the test
suite) writes each file under a hashed name with a gzipped copy; WhiteNoise serves
those with a year-long, immutable cache. A process started without collecting
(``manage.py runserver``, a load-test server) still works: a name missing from the
manifest is given its plain URL, which WhiteNoise finds in the source folders
(``WHITENOISE_USE_FINDERS``) and serves with a short cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.staticfiles import finders
from django.contrib.staticfiles.finders import BaseFinder
from django.contrib.staticfiles.storage import staticfiles_storage
from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return str(super().stored_name(name))
        except ValueError:  # not collected (yet): no hashed copy to point at
            return name


class HashedNameFinder(BaseFinder):
    """Finds ``css/base.1a2b3c4d5e6f.css`` as the source file ``css/base.css``.

    For servers that look files up through the finders rather than STATIC_ROOT (the
    test suite's live server, Django's static-files handler): pages name hashed files.
    It lists nothing, so ``collectstatic`` never copies anything from it.
    """

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        hashed = getattr(staticfiles_storage, "hashed_files", {}) or {}
        original = next((name for name, h in hashed.items() if h == path and name != h), None)
        if original is None:
            return [] if find_all else None
        return finders.find(original, find_all=find_all)

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, Any]]:
        return iter(())
