"""`make test` installs every system program the tests start (a fresh machine passes).

The programs are listed once, in ``scripts/system-programs.txt``, and
``scripts/ensure-programs.sh`` installs the missing ones from Debian. These tests
read what the suite, the load harness and the Procfile actually start, and fail
when one of them is neither on that list nor installed by pip into the venv.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "scripts" / "system-programs.txt"
VENV_BIN = Path(sys.executable).parent
# Shells, their builtins and make (which runs `make test` itself): never installed by us.
BASE = {"bash", "sh", "exec", "ulimit", "cd", "test", "make"}
SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}


def listed() -> dict[str, set[str]]:
    """program -> the commands (test, services) that install it."""
    out: dict[str, set[str]] = {}
    for line in LIST.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        program, _package, *users = line.split()
        out[program] = set(users)
    return out


def started_by_python(path: Path) -> set[str]:
    """Programs a module starts: ``shutil.which("x")``, ``subprocess.*(["x", ...])``
    and absolute paths to system programs or fonts."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            first = node.args[0]
            if name == "which" and isinstance(first, ast.Constant):
                found.add(str(first.value))
            elif name in SUBPROCESS_CALLS and isinstance(first, ast.List) and first.elts:
                head = first.elts[0]
                if isinstance(head, ast.Constant) and isinstance(head.value, str):
                    found.add(head.value)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"/usr/(s?bin|share/fonts)/[\w./-]+", node.value)
        ):
            found.add(node.value)
    return found


def started_by_procfile() -> set[str]:
    found: set[str] = set()
    for line in (ROOT / "Procfile").read_text().splitlines():
        if ":" not in line or line.lstrip().startswith("#"):
            continue
        for part in re.split(r"&&|\|\||;|\|", line.split(":", 1)[1]):
            words = [w for w in part.split() if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)]
            while words and words[0] in {"exec"}:
                words.pop(0)
            if words:
                found.add(words[0])
    return found


def provided(program: str, programs: dict[str, set[str]]) -> bool:
    return program in programs or program in BASE or (VENV_BIN / program).exists()


def test_every_program_the_tests_and_the_harness_start_is_installed_by_make_test() -> None:
    programs = listed()
    sources = [*sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "loadtest").rglob("*.py"))]
    started = {prog: src for src in sources for prog in started_by_python(src)}
    # The drill test runs the Procfile's processes: they count as the tests' too.
    started |= {prog: ROOT / "Procfile" for prog in started_by_procfile()}
    assert "haproxy" in started and "/usr/bin/chromium" in started  # the scan sees them
    missing = {
        prog: str(src.relative_to(ROOT))
        for prog, src in started.items()
        if not provided(prog, programs) or (prog in programs and "test" not in programs[prog])
    }
    assert missing == {}, f"add these to scripts/system-programs.txt for `test`: {missing}"


def test_make_run_services_installs_what_the_procfile_starts() -> None:
    programs = listed()
    unlisted = {
        p
        for p in started_by_procfile()
        if not provided(p, programs) or (p in programs and "services" not in programs[p])
    }
    assert unlisted == set()


def test_make_test_runs_the_installer_for_its_programs() -> None:
    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/ensure-programs.sh test" in recipe


def dry_run(tmp_path: Path, need: str, lines: list[str]) -> list[str]:
    listing = tmp_path / "programs.txt"
    listing.write_text("# a comment\n\n" + "\n".join(lines) + "\n")
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "ensure-programs.sh"), need, "--dry-run"],
        env={**os.environ, "SYSTEM_PROGRAMS": str(listing)},
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.split()


def test_the_installer_asks_only_for_what_is_missing_for_that_command(tmp_path: Path) -> None:
    lines = [
        f"{tmp_path}/no-such-program   pkg-absent-path   test",
        "no-such-program-on-path         pkg-absent-name   test services",
        "bash                            pkg-present       test",
        f"{tmp_path}                      pkg-present-dir   test",
        f"{tmp_path}/other                pkg-services-only services",
    ]
    assert dry_run(tmp_path, "test", lines) == ["pkg-absent-path", "pkg-absent-name"]
    assert dry_run(tmp_path, "services", lines) == ["pkg-absent-name", "pkg-services-only"]
