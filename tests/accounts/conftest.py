"""People for the accounts tests: alice and bob play, charlie only watches."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

PASSWORD = "correct horse battery staple"


@pytest.fixture
def password() -> str:
    """Everyone's password in these tests."""
    return PASSWORD


@pytest.fixture
def alice(db: Any) -> Any:
    return get_user_model().objects.create_user("alice", password=PASSWORD)


@pytest.fixture
def bob(db: Any) -> Any:
    return get_user_model().objects.create_user("bob", password=PASSWORD)


@pytest.fixture
def charlie(db: Any) -> Any:
    return get_user_model().objects.create_user("charlie", password=PASSWORD)
