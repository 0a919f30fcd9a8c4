"""People, settings and scripted clients for the trust tests (issue 16).

Every test starts from the embedded default (in-memory channel layer, the
sweeper in the web process, no background loops), an empty rate-limit cache and
the budgets' real numbers unless a test says otherwise. alice, bob, carol,
dave and outsider (tests/conftest.py) have ``PASSWORD``.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import caches

from tests.support import FAST_HASHERS, PASSWORD, use_embedded_default


@pytest.fixture
def user_password() -> str:
    return PASSWORD


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    use_embedded_default(settings)
    settings.PASSWORD_HASHERS = FAST_HASHERS
    caches["ratelimit"].clear()
    return settings
