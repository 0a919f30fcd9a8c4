"""A frame's receipt time, stamped where the transport reads it, never charged for our backlog.

The rules time every action by its receipt (RULES §7). A frame that reached
the server while the process was busy waited behind our own work: in Daphne's
per-socket queue (the application had not read it yet) and, when the event
loop stalled, in the kernel's socket buffer (the loop had not read it yet).
Neither wait is the player's, so:

- the frame is stamped when Daphne's protocol reads it off the socket
  (:class:`StampedWebSocketProtocol`, installed by ``config.serve``), before
  it joins the socket's queue — the wait in the queue is never counted;
- if the event loop came back late, the stamp is moved back to
  :data:`LAG_BOUND_MS` after the loop was due (its 50 ms tick,
  ``matches.realtime.periodic``): what a stalled loop kept waiting in the kernel is
  given back, up to the whole stall. A loop on time credits nothing.

A player can neither set nor move the stamp: it is the server's, in the ASGI
message, never read from the frame.
"""

from __future__ import annotations

import time
from typing import Any

import autobahn.websocket.protocol as autobahn_protocol
import txaio
from daphne.ws_protocol import WebSocketProtocol

from matches.clock import liveness

LAG_BOUND_MS = 100  # lateness of the loop that a frame is charged for, at most
TICK_MS = 50  # matches.realtime.periodic.TICK_S

credited_ms = 0  # all loop lag given back to frames (matches.clock.metrics reads it)


def stamp(now_ms: int | None = None) -> int:
    """The receipt time of a frame read now: now, less the loop's lateness past the bound."""
    global credited_ms
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    tick = liveness.loop_tick_ms
    if tick is None:
        return now
    latest = tick + TICK_MS + LAG_BOUND_MS  # the loop was due back by then
    if now <= latest:
        return now
    credited_ms += now - latest
    return latest


_pformat = autobahn_protocol.pformat


def _unformatted(value: Any) -> str:
    return "(not formatted: autobahn logs at debug level only)"


class StampedWebSocketProtocol(WebSocketProtocol):  # type: ignore[misc]
    """Daphne's WebSocket protocol, with each text frame's receipt stamped on arrival,
    and the handshake's too (``websocket.connect``'s ``received_at``): from then on a
    turn that reaches the socket in its first view waited for us, not for the player."""

    connect_received_at: int | None = None

    def _connectionMade(self) -> None:
        # autobahn pretty-prints its whole configuration for a debug line on every new
        # connection, shown or not: 3.4 % of a web process in the reconnect wave after a
        # proxy restart at 500 matches. Not made unless autobahn logs at debug level.
        if txaio.get_global_log_level() in ("debug", "trace"):
            super()._connectionMade()
            return
        autobahn_protocol.pformat = _unformatted
        try:
            super()._connectionMade()
        finally:
            autobahn_protocol.pformat = _pformat

    def onConnect(self, request: Any) -> Any:
        self.connect_received_at = stamp()
        return super().onConnect(request)

    def applicationCreateWorked(self, application_queue: Any) -> None:
        # Daphne's own, with the stamp in the connect message.
        self.application_queue = application_queue
        message: dict[str, Any] = {"type": "websocket.connect"}
        if self.connect_received_at is not None:
            message["received_at"] = self.connect_received_at
        self.application_queue.put_nowait(message)
        client = "{}:{}".format(*self.client_addr) if self.client_addr else None
        self.server.log_action(
            "websocket", "connecting", {"path": self.request.path, "client": client}
        )

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        if self.muted or isBinary:
            super().onMessage(payload, isBinary)
            return
        self.last_ping = time.time()
        message: dict[str, Any] = {
            "type": "websocket.receive",
            "text": payload.decode("utf8"),
            "received_at": stamp(),
        }
        self.application_queue.put_nowait(message)
