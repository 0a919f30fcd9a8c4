"""When no web process can take a request, the proxy answers with our page (deploy/errors/).

During a restart of the whole web tier, HAProxy has no server for a request: it used
to answer its own English page ("No server is available to handle this request"). Now
it answers ``deploy/errors/503.http``: Japanese first, then English, saying that the
site is restarting and that the clocks do not run meanwhile, with ``Retry-After``; the
page reloads itself and, once a web process is back, is the site again. The files are
rendered from the templates and the translations (``python -m config.proxy_errors``)
and must not fall behind them.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from config import proxy_errors
from tests.conftest import unavailable
from tests.processes import ROOT, free_port, wait_for


def test_the_committed_pages_are_what_the_templates_render_now() -> None:
    for status in proxy_errors.REASONS:
        assert proxy_errors.path(status).read_bytes() == proxy_errors.render(status), (
            f"deploy/errors/{status}.http is stale: run `python -m config.proxy_errors`"
        )


def test_each_page_is_a_whole_http_response_in_both_languages() -> None:
    for status, reason in proxy_errors.REASONS.items():
        raw = proxy_errors.path(status).read_bytes()
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        assert lines[0] == f"HTTP/1.1 {status} {reason}"
        headers = dict(line.split(": ", 1) for line in lines[1:])
        assert int(headers["Content-Length"]) == len(body)
        assert headers["Retry-After"] == str(proxy_errors.RETRY_AFTER_S)
        assert headers["Cache-Control"] == "no-store"
        assert len(raw) < 8192  # HAProxy keeps an error file in one buffer (16 kB less rewrite)
        page = body.decode()
        assert page.index("再起動しています") < page.index("Spectacular Bid is restarting")
        assert "持ち時間" in page and "not taken from anyone's clock" in page


class _Back(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b"<!doctype html><title>back</title><p id=back>back</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tier_down(tmp_path: Path) -> Iterator[tuple[str, list[int]]]:
    """The real proxy configuration in front of two web ports where nothing listens."""
    if shutil.which("haproxy") is None:
        unavailable("needs HAProxy (scripts/ensure-programs.sh installs it)")
    port, web = free_port(), [free_port(), free_port()]
    env = {
        **os.environ,
        "SB_HOST": "127.0.0.1",
        "SB_PORT": str(port),
        "WEB1_PORT": str(web[0]),
        "WEB2_PORT": str(web[1]),
    }
    log = (tmp_path / "haproxy.log").open("w")
    # Started from another directory: the error files are found beside the configuration.
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def answers() -> bool:  # any HTTP answer (503: nothing behind it)
            assert proc.poll() is None, (tmp_path / "haproxy.log").read_text()
            try:
                urllib.request.urlopen(base + "/", timeout=2)  # noqa: S310 - our own proxy
            except urllib.error.HTTPError:
                return True
            except OSError:
                return False
            return True

        wait_for(answers, 10, "HAProxy listening")
        yield base, web
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _answer(url: str) -> tuple[int, Any, str]:
    """The status, headers (their names in any case: HAProxy writes them lower-case) and page."""
    try:
        urllib.request.urlopen(url, timeout=5)  # noqa: S310 - our own proxy
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()
    raise AssertionError(f"{url} answered 200 with no web process up")


def test_with_no_web_process_a_page_and_a_socket_get_our_page(
    tier_down: tuple[str, list[int]],
) -> None:
    base, _ = tier_down
    for path in ("/", "/matches/17/", "/ws/matches/17/?format=html", "/ws/lobby/"):
        status, headers, body = _answer(base + path)
        assert status == 503, path
        assert headers["Retry-After"] == str(proxy_errors.RETRY_AFTER_S)
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert '<html lang="ja">' in body and "再起動しています" in body
        assert "Spectacular Bid is restarting" in body
        assert "No server is available" not in body  # HAProxy's own page


def test_the_page_fits_a_phone_and_comes_back_by_itself(
    browser: Any, tier_down: tuple[str, list[int]]
) -> None:
    base, web = tier_down
    ctx = browser.new_context(locale="ja-JP", viewport={"width": 360, "height": 740},
                              has_touch=True, is_mobile=True)  # fmt: skip
    servers: list[http.server.ThreadingHTTPServer] = []
    try:
        page = ctx.new_page()
        page.goto(base + "/")
        assert page.locator("h1").first.inner_text() == "スペクタキュラー・ビッドを再起動しています"
        assert page.evaluate("document.documentElement.scrollWidth") <= 360  # not innerWidth:
        # a mobile layout viewport widens to its content
        for box in page.locator("a").evaluate_all(
            "(els) => els.map((e) => { const r = e.getBoundingClientRect();"
            " return [r.width, r.height]; })"
        ):
            assert box[0] >= 44 and box[1] >= 44, box
        # A web process comes back: the page reloads itself and is the site again.
        for p in web:
            server = http.server.ThreadingHTTPServer(("127.0.0.1", p), _Back)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            servers.append(server)
        page.locator("#back").wait_for(timeout=(proxy_errors.RETRY_AFTER_S + 10) * 1000)
    finally:
        ctx.close()
        for server in servers:
            server.shutdown()
            server.server_close()
