"""A burst of connections waits in line while the web process is busy (issue 14).

In a reconnect wave a web process's loop accepts connections more slowly than
they arrive. The kernel keeps completed connections in the listen backlog until
the process takes them; past it, it drops their SYNs, and each dropped one costs
its client a retransmit (1 s, then 3 s) and the proxy a connect timeout and a
retry. Twisted's default backlog, 50, overflowed in the drill at 500 matches.
"""

from __future__ import annotations

import os
import signal
import socket

from config.serve import LISTEN_BACKLOG
from tests.processes import WebProcess

BURST = 300  # six times Twisted's default backlog, well inside ours


def test_a_burst_of_connections_to_a_stalled_process_all_get_in_line(
    embedded_web: WebProcess,
) -> None:
    assert BURST < LISTEN_BACKLOG
    proc = embedded_web.proc
    assert proc is not None
    socks: list[socket.socket] = []
    os.kill(proc.pid, signal.SIGSTOP)  # a loop that accepts nothing for now
    try:
        for _ in range(BURST):
            s = socket.socket()
            s.settimeout(2.0)  # a dropped SYN is retransmitted only after 1 s
            s.connect(("127.0.0.1", embedded_web.port))  # raises if the kernel dropped it
            socks.append(s)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        for s in socks:
            s.close()
    assert len(socks) == BURST
    # And the process, taking them all once it runs again, still answers.
    with socket.create_connection(("127.0.0.1", embedded_web.port), timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        assert s.recv(12).startswith(b"HTTP/1.")
