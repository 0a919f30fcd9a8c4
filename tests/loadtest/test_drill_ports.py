"""The drill's processes listen below the kernel's range for outgoing connections: a
port in that range can be taken by any outgoing connection while its web process is
down for a restart, and the restarted process then never listens."""

from __future__ import annotations

import socket

from loadtest.drill import ephemeral_low, free_ports


def test_the_drill_picks_free_ports_below_the_outgoing_range() -> None:
    low = ephemeral_low()
    for _ in range(20):
        base = free_ports(3)
        assert base >= 1024 and base + 2 < low
        for port in range(base, base + 3):  # each one free to listen on
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
    # An outgoing connection's own port is in that range: that is what is avoided.
    with (
        socket.create_server(("127.0.0.1", 0)) as server,
        socket.create_connection(server.getsockname()) as client,
    ):
        assert client.getsockname()[1] >= low
