"""People for the page tests (rules, header, invite): alice invites, bob accepts, the
outsider only looks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import FAST_HASHERS, PASSWORD


@pytest.fixture
def user_password(settings: Any) -> str:
    """Everyone has ``PASSWORD`` here (the invite tests log in), hashed the fast way."""
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return PASSWORD
