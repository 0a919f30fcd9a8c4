"""The ``>>>`` examples in the engine's docstrings, so a plain ``pytest`` runs them."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import engine

MODULES = sorted(f"engine.{m.name}" for m in pkgutil.iter_modules(engine.__path__))


def test_the_engine_has_modules_and_examples() -> None:
    assert {"engine.match", "engine.layout", "engine.tiles"} <= set(MODULES)
    finder = doctest.DocTestFinder()
    examples = sum(
        len(t.examples) for name in MODULES for t in finder.find(importlib.import_module(name))
    )
    assert examples >= 15, f"only {examples} doctest examples in the engine"


@pytest.mark.parametrize("name", ["engine", *MODULES])
def test_the_docstring_examples_hold(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
