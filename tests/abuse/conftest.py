"""The abuse probes of issue 16 (README "Abuse and limits"), played from outside.

Each test talks HTTP to the site, as a client would (Django's test client, or a
real Daphne server for the browser tests), and checks that a refused request
changed nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import FAST_HASHERS, PASSWORD


@pytest.fixture(autouse=True)
def fast_hashing(settings: Any) -> Any:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return settings


@pytest.fixture
def user_password() -> str:
    return PASSWORD
