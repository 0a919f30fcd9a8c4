"""The proxy sends every socket of a match to one web process (deploy/haproxy.cfg).

A change is handed to the sockets of the process that committed it without a trip
through Redis (matches/realtime/layers.py); the proxy makes that the usual case by
sending a match's sockets — both seats, whatever their format, and its spectators —
to the process its id hashes to, while pages and the lobby's sockets are balanced by
connections. Two stand-in servers behind the real configuration say which one a
request reached.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import unavailable
from tests.processes import ROOT, free_port, wait_for


class _Named(http.server.ThreadingHTTPServer):
    name = ""


class _Says(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = self.server.name.encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[str]:
    if shutil.which("haproxy") is None:
        unavailable("needs HAProxy (scripts/ensure-programs.sh installs it)")
    servers = []
    ports = {}
    for name in ("web1", "web2"):
        server = _Named(("127.0.0.1", 0), _Says)
        server.name = name
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        ports[name] = server.server_address[1]
    port = free_port()
    env = {
        **os.environ,
        "SB_HOST": "127.0.0.1",
        "SB_PORT": str(port),
        "WEB1_PORT": str(ports["web1"]),
        "WEB2_PORT": str(ports["web2"]),
    }
    # The real configuration, and a stats socket for this test: the match affinity is
    # bounded (hash-balance-factor), so a connection the proxy still counts from the
    # previous request may send the next elsewhere; each request waits until none is.
    stats = tmp_path / "stats.sock"
    extra = tmp_path / "stats.cfg"
    extra.write_text(f"global\n    stats socket {stats}\n")
    log = (tmp_path / "haproxy.log").open("w")
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg"), "-f", str(extra)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def both_up() -> bool:  # each server's check passed: each says its name
            assert proc.poll() is None, (tmp_path / "haproxy.log").read_text()
            try:
                return {_get(base, f"/p{i}/") for i in range(6)} == {"web1", "web2"}
            except OSError:
                return False

        wait_for(both_up, 10, "HAProxy with both servers up")
        _STATS[base] = stats
        yield base
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
        for server in servers:
            server.shutdown()
            server.server_close()


_STATS: dict[str, Path] = {}


def _open_sessions(stats: Path) -> int:
    """Sessions the proxy's servers still count (its stats socket's ``scur``)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(stats))
        s.sendall(b"show stat\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    lines = data.decode().splitlines()
    head = lines[0].lstrip("# ").split(",")
    scur, sv = head.index("scur"), head.index("svname")
    rows = [line.split(",") for line in lines[1:] if line]
    return sum(int(r[scur] or 0) for r in rows if r[sv] not in ("FRONTEND", "BACKEND"))


def _get(base: str, path: str) -> str:
    stats = _STATS.get(base)
    if stats is not None:
        wait_for(lambda: _open_sessions(stats) == 0, 5, "the proxy's last request closed")
    with urllib.request.urlopen(base + path, timeout=5) as r:  # noqa: S310 - our own proxy
        return str(r.read().decode())


def test_every_socket_of_a_match_reaches_the_same_web_process(proxy: str) -> None:
    where = {}
    for match_id in range(1, 41):
        seen = {
            _get(proxy, f"/ws/matches/{match_id}/{query}")
            for query in ("?format=html", "?v=2", "", "?format=html&seen=12", "?format=html")
        }
        assert len(seen) == 1, (match_id, seen)  # both seats, any format, the spectators
        where[match_id] = seen.pop()
    # The matches are spread over both processes, not all sent to one.
    counts = Counter(where.values())
    assert set(counts) == {"web1", "web2"} and min(counts.values()) >= 8, counts


def test_pages_and_the_lobby_are_still_spread_over_both(proxy: str) -> None:
    pages = Counter(_get(proxy, "/lobby/") for _ in range(10))
    lobby = Counter(_get(proxy, "/ws/lobby/") for _ in range(10))
    assert set(pages) == {"web1", "web2"}, pages
    assert set(lobby) == {"web1", "web2"}, lobby
