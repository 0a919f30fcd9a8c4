"""The proxy sends every socket of a match to one web process (deploy/haproxy.cfg).

A change is handed to the sockets of the process that committed it without a trip
through Redis (matches/realtime/layers.py); the proxy makes that the usual case by
sending a match's sockets — both seats, whatever their format, and its spectators —
to the process its id hashes to, while pages and the lobby's sockets are balanced by
connections. Two stand-in servers behind the real configuration say which one a
request reached. When a match's process refuses connections (stopping, or killed,
before the health checks have noticed), its sockets go to the other process, however
many sockets that one holds already.
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
    release = threading.Event()  # what holds a ``?hold`` request open


class _Says(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if "hold" in self.path:  # an open socket: answered only when the test ends
            self.server.release.wait(60)  # type: ignore[attr-defined]
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
        server.release = threading.Event()
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
    # The real configuration, and a stats socket for this test: pages are balanced by
    # connections, so each request waits until the proxy counts none of the last; and
    # a server's health checks can be stopped, to hold the moment before they notice.
    stats = tmp_path / "stats.sock"
    extra = tmp_path / "stats.cfg"
    extra.write_text(f"global\n    stats socket {stats} level admin\n")
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
        _SERVERS[base] = {server.name: server for server in servers}
        yield base
    finally:
        for server in servers:
            server.release.set()
        proc.terminate()
        proc.wait(10)
        log.close()
        for server in servers:
            server.shutdown()
            server.server_close()


_STATS: dict[str, Path] = {}
_SERVERS: dict[str, dict[str, _Named]] = {}


def _ask(stats: Path, command: bytes) -> str:
    """The proxy's answer to one command on its stats socket."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(stats))
        s.sendall(command + b"\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data.decode()


def _open_sessions(stats: Path, server: str | None = None) -> int:
    """Sessions the proxy's servers (or one of them) still count (its stats socket's ``scur``)."""
    lines = _ask(stats, b"show stat").splitlines()
    head = lines[0].lstrip("# ").split(",")
    scur, sv = head.index("scur"), head.index("svname")
    rows = [line.split(",") for line in lines[1:] if line]
    names = ("web1", "web2") if server is None else (server,)
    return sum(int(r[scur] or 0) for r in rows if r[sv] in names)


def _get(base: str, path: str, *, settled: bool = True) -> str:
    stats = _STATS.get(base)
    if stats is not None and settled:
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


def test_a_match_whose_process_refuses_goes_to_the_other_however_full(proxy: str) -> None:
    """The reconnect wave of a web process that stopped listening (SIGTERM) or died
    (SIGKILL): until the health checks mark it down, the hash still names it. Each
    refused connection is sent to the other process, even when that one holds every
    open socket (with a bounded-load hash, ``hash-balance-factor 150``, this test got
    a 503: the proxy sent it back to the process that refused, as it did 369
    handshakes in one web process's SIGTERM of the drill at 200 matches)."""
    by_process: dict[str, list[int]] = {"web1": [], "web2": []}
    for match_id in range(1, 41):
        by_process[_get(proxy, f"/ws/matches/{match_id}/")].append(match_id)
    # Sockets open on both; then web2's close (its process is stopping and has closed
    # them): web1 holds every open socket, web2 none, as in a restart's reconnect wave.
    held = []
    for i in range(16):
        match_id = by_process["web1"][i % len(by_process["web1"])]
        s = socket.create_connection(("127.0.0.1", int(proxy.rsplit(":", 1)[1])), timeout=5)
        s.sendall(f"GET /ws/matches/{match_id}/?hold HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        held.append(s)
    stats = _STATS[proxy]
    wait_for(lambda: _open_sessions(stats) == len(held), 5, "the held sockets counted")
    _SERVERS[proxy]["web2"].release.set()
    wait_for(lambda: _open_sessions(stats, "web2") == 0, 5, "web2's sockets closed")
    assert _open_sessions(stats, "web1") >= 8
    # web2 stops listening; its checks are held so the proxy still thinks it is up.
    assert _ask(stats, b"disable health web/web2").strip() == ""
    web2 = _SERVERS[proxy]["web2"]
    web2.shutdown()
    web2.server_close()
    try:
        for match_id in by_process["web2"]:
            assert _get(proxy, f"/ws/matches/{match_id}/", settled=False) == "web1", match_id
    finally:
        for s in held:
            s.close()
