"""The drill's and bench-load's processes listen below the kernel's range for outgoing
connections: a port in that range can be taken by any outgoing connection while its web
process is down for a restart (or not started yet), and then it never listens."""

from __future__ import annotations

import socket

from loadtest.setups import Embedded, Services, ephemeral_low, free_ports


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


def test_bench_load_s_set_ups_listen_and_serve_metrics_below_the_outgoing_range() -> None:
    low = ephemeral_low()
    for setup in (Embedded(), Services()):
        ports = [setup.port, *setup.metrics_ports]
        assert all(1024 <= p < low for p in ports), (setup.name, ports)
        assert len(set(ports)) == len(ports)
    services = Services()
    # HAProxy on the base, web1 and web2 on the next two (the Makefile), metrics above.
    assert services.metrics_ports == [services.port + 3, services.port + 4]
    assert services.env["WEB1_METRICS_PORT"] == str(services.port + 3)
