"""tests/ui: remember each phase's report so fixtures can keep a screenshot of a failure."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep
