"""People for the accounts tests: alice and bob play, charlie only watches.

alice and bob (tests/conftest.py) and charlie all have ``PASSWORD``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import PASSWORD, make_user


@pytest.fixture
def password() -> str:
    """Everyone's password in these tests."""
    return PASSWORD


@pytest.fixture
def user_password() -> str:
    return PASSWORD


@pytest.fixture
def charlie(db: Any) -> Any:
    return make_user("charlie", PASSWORD)
