"""People and settings for the match tests.

alice invites and plays seat 0, bob accepts and plays seat 1, the outsider
plays no part. Every test starts from the embedded default (in-memory channel
layer, asyncio deadline timers, random deals); a test that needs Redis, Celery
or a seeded deal says so itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import FAST_HASHERS, PASSWORD, use_embedded_default

# alice, bob and outsider come from tests/conftest.py, with PASSWORD.


@pytest.fixture
def user_password() -> str:
    return PASSWORD


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    use_embedded_default(settings)
    # Users are made per test; the real hasher would spend most of the run hashing.
    settings.PASSWORD_HASHERS = FAST_HASHERS
    # Scripted clients here play whole matches in a second, far past a person's
    # 5 frames a second: the frame budget (matches.realtime.budgets) is tested in tests/trust/.
    settings.SOCKET_FRAMES_PER_S = 10_000
    settings.SOCKET_FRAME_BURST = 10_000
    return settings
