"""The ``>>>`` examples in the computer player's docstrings hold (a plain ``pytest`` runs them)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bots

MODULES = ["bots", *sorted(f"bots.{m.name}" for m in pkgutil.iter_modules(bots.__path__))]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
