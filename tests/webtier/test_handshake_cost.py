"""A new connection costs the web process only what its handshake needs.

In a reconnect wave (every socket of 500 matches coming back after a proxy restart)
the handshakes are the web processes' work; anything a connection does for nothing
is paid a thousand times at once.
"""

from __future__ import annotations

from typing import Any

import autobahn.websocket.protocol as autobahn_protocol
import pytest
from autobahn.twisted.websocket import WebSocketServerFactory
from twisted.internet.testing import StringTransport

from matches.clock import receipt


def test_a_new_connection_does_not_pretty_print_autobahns_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """autobahn formats its whole configuration for a debug line on every connection,
    logged or not; at info level it is never made, and autobahn's own is put back."""
    formatted: list[Any] = []

    def spy(value: Any) -> str:
        formatted.append(value)
        return repr(value)

    monkeypatch.setattr(autobahn_protocol, "pformat", spy)
    monkeypatch.setattr(receipt, "_pformat", spy)
    factory = WebSocketServerFactory()
    factory.protocol = receipt.StampedWebSocketProtocol
    proto = factory.buildProtocol(None)
    proto.makeConnection(StringTransport())
    assert proto.state == autobahn_protocol.WebSocketProtocol.STATE_CONNECTING
    assert proto.openHandshakeTimeout == factory.openHandshakeTimeout  # configured as before
    assert formatted == []
    assert autobahn_protocol.pformat is spy
