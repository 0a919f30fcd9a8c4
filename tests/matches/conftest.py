"""People and settings for the match tests.

alice invites and plays seat 0, bob accepts and plays seat 1, the outsider
plays no part. Every test starts from the embedded default (in-memory channel
layer, asyncio deadline timers, random deals); a test that needs Redis, Celery
or a seeded deal says so itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

PASSWORD = "correct horse battery staple"


@pytest.fixture
def alice(db: Any) -> Any:
    return get_user_model().objects.create_user("alice", password=PASSWORD)


@pytest.fixture
def bob(db: Any) -> Any:
    return get_user_model().objects.create_user("bob", password=PASSWORD)


@pytest.fixture
def outsider(db: Any) -> Any:
    return get_user_model().objects.create_user("outsider", password=PASSWORD)


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    settings.MATCH_TIMERS = "asyncio"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.DEAL_SEED = None
    # Users are made per test; the real hasher would spend most of the run hashing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings
