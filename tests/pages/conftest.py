"""People for the page tests (rules, header, invite): alice invites, bob accepts, the
outsider only looks. Everyone has ``PASSWORD`` (tests/support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import FAST_HASHERS, PASSWORD


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture
def user_password() -> str:
    return PASSWORD
