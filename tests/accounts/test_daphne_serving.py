"""What `make run` does: migrate, then Daphne serves pages and static files."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def get(url: str, **headers: str) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:  # 4xx/5xx: the page is the answer
        with error:
            return error.code, error.headers.get("Content-Type", ""), error.read()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the server keeps its database and its secret key."""
    return tmp_path_factory.mktemp("run")


@pytest.fixture(scope="module")
def server(run_dir: Path) -> Iterator[str]:
    """The embedded default (SQLite file, in-memory layer) served by Daphne."""
    db = run_dir / "db.sqlite3"
    # Nothing set but the database, as after a fresh clone: DEBUG off, a key made on first run.
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DEBUG", "SB_DEAL_SEED")}
    env.pop("SECRET_KEY", None)
    env.update(
        DATABASE_URL=f"sqlite:///{db}",
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY_FILE=str(db.parent / "var" / "secret_key"),
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    proc = subprocess.Popen(
        # What `make run` runs: Daphne through config/serve.py.
        [sys.executable, "-m", "config.serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                get(base + "/accounts/login/")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def test_daphne_serves_the_log_in_page(server: str) -> None:
    status, content_type, body = get(server + "/accounts/login/")
    assert status == 200
    assert content_type.startswith("text/html")
    assert "ログイン".encode() in body


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/static/css/base.css", "text/css"),
        ("/static/django_htmx/htmx-2.min.js", "javascript"),
        ("/static/django_htmx/ext/hx-ws-2.min.js", "javascript"),
    ],
)
def test_daphne_serves_the_static_files_the_pages_load(server: str, path: str, kind: str) -> None:
    status, content_type, body = get(server + path)
    assert status == 200
    assert kind in content_type
    assert body


def test_every_stylesheet_and_script_on_a_page_loads(server: str) -> None:
    import re

    _, _, body = get(server + "/accounts/login/")
    assets = re.findall(rb'(?:href|src)="(/static/[^"]+)"', body)
    assert len(assets) >= 3
    for asset in assets:
        assert get(server + asset.decode())[0] == 200


def test_it_serves_without_debug_pages(server: str) -> None:
    status, _, body = get(server + "/no-such-page/")
    assert status == 404
    page = body.decode()
    assert "ページが見つかりません" in page
    assert "URLconf" not in page and "admin/" not in page  # DEBUG's list of every URL


def test_an_anonymous_api_call_gets_401_json_from_daphne(server: str) -> None:
    request = urllib.request.Request(server + "/api/invites/", data=b"{}", method="POST")
    try:
        urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as error:
        with error:
            assert error.code == 401
            assert json.loads(error.read())["code"] == "not_logged_in"
    else:
        raise AssertionError("an anonymous POST to /api/invites/ was accepted")


def test_the_secret_key_was_made_private_outside_git(server: str, run_dir: Path) -> None:
    key = run_dir / "var" / "secret_key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert len(key.read_text().strip()) >= 50
