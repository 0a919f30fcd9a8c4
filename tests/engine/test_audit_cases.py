"""Audit cases in the conformance format, beyond the public ones.

Each file in ``audit_cases/`` is a conformance case (``../shared/conformance/README.md``)
whose ``expect`` was worked out by hand from RULES.md, not by running the engine.
They are replayed through ``python -m engine.conformance`` like the public cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "audit_cases"
MULTISET_KEYS = ("ends", "legal")


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def _same(key: str, want: Any, got: Any) -> bool:
    if key in MULTISET_KEYS and isinstance(want, list) and isinstance(got, list):
        return Counter(map(_canon, want)) == Counter(map(_canon, got))
    return _canon(want) == _canon(got)


def _files() -> list[Path]:
    return sorted(CASES.glob("*.json"))


def test_the_audit_cases_exist() -> None:
    assert _files(), f"no audit cases in {CASES}"


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_the_engine_matches_the_audit_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    proc = subprocess.run(
        [sys.executable, "-m", "engine.conformance", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    out = json.loads(line)
    assert out["id"] == case["id"]
    got, actions, expect = out["results"], case["actions"], case["expect"]
    assert len(expect) == len(actions) == len(got)
    problems = [
        f"action {i} {json.dumps(actions[i])}: {key} "
        f"expected {_canon(want)} got {_canon(got[i][key])}"
        for i, exp in enumerate(expect)
        for key, want in exp.items()
        if not _same(key, want, got[i][key])
    ]
    assert not problems, "\n".join(problems)
