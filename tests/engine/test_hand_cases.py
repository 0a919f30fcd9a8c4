"""Cases in the conformance format beyond the public ones, worked out by hand.

Each file in ``hand_cases/`` is a conformance case (``../shared/conformance/README.md``)
whose ``expect`` was computed by hand from RULES.md, not by running the engine:
situations the public cases do not reach (draws and a pass in one turn, a timeout
after a draw, the auction's deadline, a later spinner with a double on a branch,
the jockey's raise at the edge of its balance, a resign between hands, the block's
pass count). They are replayed through ``python -m engine.conformance`` and compared
exactly as the public cases are (``test_conformance``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_conformance import printed, run_runner, same

CASES = Path(__file__).resolve().parent / "hand_cases"


def _files() -> list[Path]:
    return sorted(CASES.glob("*.json"))


@cache
def _run() -> dict[str, list[dict[str, Any]]]:
    proc = run_runner(*_files())
    assert proc.returncode == 0, proc.stderr
    return printed(proc)


def test_the_hand_cases_exist() -> None:
    assert len(_files()) >= 7, f"hand-computed cases missing from {CASES}"


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_the_engine_gives_the_hand_computed_snapshots(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    got = _run()[case["id"]]
    assert len(case["expect"]) == len(case["actions"]) == len(got)
    problems = [
        f"action {i} {json.dumps(case['actions'][i])}: {key} "
        f"expected {json.dumps(want)} got {json.dumps(got[i][key])}"
        for i, exp in enumerate(case["expect"])
        for key, want in exp.items()
        if not same(key, want, got[i][key])
    ]
    assert not problems, "\n".join(problems)
