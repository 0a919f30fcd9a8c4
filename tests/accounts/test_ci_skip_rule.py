"""The CI rule: with REQUIRE_SERVICES=1 a skipped test is a failure (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

SKIPPING = """
import pytest

def test_skips_inside():
    pytest.skip("no server here")

@pytest.mark.skip(reason="marked")
def test_marked_skip():
    pass

def test_needs_redis(require_redis):
    pass

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False

def test_passes():
    pass
"""


# Only the conftest under test; the other plugins cost seconds to load.
PLUGINS_OFF = [
    f"-pno:{name}" for name in ("django", "cacheprovider", "asyncio", "hypothesispytest")
]


def run_pytest(
    tmp_path: Path, *, require: bool, redis_url: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "test_sample.py").write_text(SKIPPING)
    env = {k: v for k, v in os.environ.items() if k not in ("REQUIRE_SERVICES",)}
    env["TEST_REDIS_URL"] = redis_url
    env.pop("DJANGO_SETTINGS_MODULE", None)
    if require:
        env["REQUIRE_SERVICES"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGINS_OFF, "--rootdir", str(tmp_path), "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# A port nothing listens on: Redis is "missing" for the sample tests.
NO_REDIS = "redis://127.0.0.1:1/0"


def test_skips_are_fine_on_a_developer_machine(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, require=False, redis_url=NO_REDIS)
    assert result.returncode == 0, result.stdout
    assert "1 passed, 3 skipped, 1 xfailed" in result.stdout


def test_skips_fail_under_require_services(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, require=True, redis_url=NO_REDIS)
    assert result.returncode == 1, result.stdout
    # A skip in the test body fails it; a skip while setting up (a marker, a fixture) errors.
    assert "1 failed, 1 passed, 1 xfailed, 2 errors" in result.stdout
    assert "REQUIRE_SERVICES=1" in result.stdout
    assert "needs Redis at redis://127.0.0.1:1/0" in result.stdout


def test_a_module_level_skip_fails_under_require_services(tmp_path: Path) -> None:
    (tmp_path / "test_module_skip.py").write_text(
        "import pytest\npytest.importorskip('no_such_module_here')\n"
    )
    result = run_pytest(tmp_path, require=True, redis_url=NO_REDIS)
    assert result.returncode != 0
    assert "module skipped under REQUIRE_SERVICES=1" in result.stdout


def test_require_redis_passes_when_redis_answers(tmp_path: Path, require_redis: str) -> None:
    result = run_pytest(tmp_path, require=False, redis_url=require_redis)
    assert "2 passed, 2 skipped, 1 xfailed" in result.stdout


@pytest.mark.usefixtures("require_postgres")
def test_require_postgres_finds_the_test_database(db: object) -> None:
    from django.db import connection

    assert connection.vendor == "postgresql"
