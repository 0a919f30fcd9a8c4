"""Bot accounts for the tests: ``robo`` and ``droid`` are bots with tokens.

alice and bob (tests/conftest.py) are people (logged in with ``force_login``). ``robo`` and
``droid`` are made the way a user makes them: a fresh account turned into a bot
(``bot_accounts.become_bot``) and given a token (``issue_token``); the fixtures
return ``(user, token)``. Every test starts from the embedded default and an
empty rate-limit cache.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import caches

from accounts import bot_accounts
from tests.support import FAST_HASHERS, PASSWORD, make_user, use_embedded_default


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    use_embedded_default(settings)
    settings.PASSWORD_HASHERS = FAST_HASHERS
    caches["ratelimit"].clear()
    return settings


def make_bot(name: str) -> tuple[Any, str]:
    """A fresh account ``name`` turned into a bot account, and its new token."""
    user = bot_accounts.become_bot(make_user(name, PASSWORD))
    return user, bot_accounts.issue_token(user)


@pytest.fixture
def robo(db: Any) -> tuple[Any, str]:
    return make_bot("robo")


@pytest.fixture
def droid(db: Any) -> tuple[Any, str]:
    return make_bot("droid")


def bearer(token: str) -> dict[str, str]:
    """The Django test client's keyword for the ``Authorization`` header."""
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}
