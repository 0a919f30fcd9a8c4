"""The project's modules are compiled to bytecode before its processes start.

This kind of machine sets ``PYTHONDONTWRITEBYTECODE``: without a compiled cache every
process compiled every module of ours at every start (0.4 s of a web process's 1.6 s
on an idle machine). ``scripts/compile_bytecode.py`` writes the cache in ``release``,
``make run`` and ``make test``; Python reads it even with the flag set.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import compile_bytecode  # noqa: E402


def test_the_packages_are_the_ones_pyproject_installs() -> None:
    names = {p.name for p in compile_bytecode.packages()}
    assert {"config", "matches", "engine", "accounts", "social", "tournaments"} <= names
    assert "tests" not in names and "loadtest" not in names and "scripts" not in names


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["game*"]\n'
    )
    for pkg, body in (("game", "X = 1\n"), ("other", "Y = 2\n")):
        (tmp_path / pkg / "sub").mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text(body)
        (tmp_path / pkg / "sub" / "__init__.py").write_text("")
        (tmp_path / pkg / "sub" / "deep.py").write_text("Z = 3\n")
    return tmp_path


def test_every_module_of_the_project_gets_its_cache_and_nothing_else(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert compile_bytecode.main(root) == 0
    for module in ("game/__init__.py", "game/sub/__init__.py", "game/sub/deep.py"):
        assert Path(importlib.util.cache_from_source(str(root / module))).is_file(), module
    assert not Path(importlib.util.cache_from_source(str(root / "other/sub/deep.py"))).exists()


def test_python_reads_the_cache_with_the_flag_that_stops_it_writing_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    compile_bytecode.main(root)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-v", "-c", "import game.sub.deep"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    deep = importlib.util.cache_from_source(str(root / "game/sub/deep.py"))
    assert f"matches {root / 'game/sub/deep.py'}" in out or f"code object from '{deep}'" in out


@pytest.mark.parametrize("where", ["Procfile", "Makefile"])
def test_release_run_and_test_compile_before_starting(where: str) -> None:
    text = (ROOT / where).read_text()
    assert "scripts/compile_bytecode.py" in text
    if where == "Procfile":
        (release,) = [line for line in text.splitlines() if line.startswith("release:")]
        assert release.rstrip().endswith("python scripts/compile_bytecode.py")
