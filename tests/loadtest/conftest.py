"""The load harness's tests: the embedded default, as in tests/matches."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import use_embedded_default


@pytest.fixture(autouse=True)
def embedded_default(settings: Any) -> Any:
    return use_embedded_default(settings)
