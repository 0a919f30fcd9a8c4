"""Static files: content-hashed names when collected, plain names when not.

``manage.py collectstatic`` (run by ``make run``, the release step and the test
suite) writes each file under a hashed name with a gzipped copy; WhiteNoise serves
those with a year-long, immutable cache. A process started without collecting
(``manage.py runserver``, a load-test server) still works: a name missing from the
manifest is given its plain URL, which WhiteNoise finds in the source folders
(``WHITENOISE_USE_FINDERS``) and serves with a short cache.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return str(super().stored_name(name))
        except ValueError:  # not collected (yet): no hashed copy to point at
            return name
