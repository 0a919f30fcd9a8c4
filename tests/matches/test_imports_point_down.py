"""ARCHITECTURE: imports point down — ``services`` is the bottom of ``matches/``.

The queue, rematch, sweeper, liveness, broadcast, voiding, computer and tasks
modules use ``services``; ``services`` imports none of them, not even inside a
function (the old ``services`` ↔ ``queue``/``rematch``/``timers``/``broadcast``
circle). Read from the source, so a late import is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

MATCHES = Path(__file__).resolve().parents[2] / "matches"
ABOVE = {
    "queue", "rematch", "sweeper", "liveness", "broadcast", "voiding", "computer", "tasks",
    "consumers", "lobby_consumer", "views", "queue_views", "periodic", "render", "db",
}  # fmt: skip


def _matches_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found |= {a.name for a in node.names}
            elif node.module and node.module.startswith("matches."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("matches.")}
    return found


def test_services_imports_nothing_above_it() -> None:
    assert _matches_imports(MATCHES / "services.py") & ABOVE == set()


def test_the_modules_above_use_services() -> None:
    for name in ("queue", "rematch", "sweeper", "voiding", "computer"):
        assert "services" in _matches_imports(MATCHES / f"{name}.py"), name
