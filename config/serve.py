"""Serve the site with Daphne: ``python -m config.serve [--host H] [--port P]``.

Daphne's own command line, with what a live match needs from its web process:

- **before listening**, the process beats (``matches.clock.liveness``): if the whole
  web tier was down until now, the outage is given back to every running clock
  first, so no frame is ever judged against time in which nobody could send one;
- the loop's tick, the pulse thread and (embedded default) the sweeper start
  with the reactor (``matches.realtime.periodic``), not with the first socket;
- WebSocket messages are limited to :data:`WS_MAX_MESSAGE` bytes: a frame up to
  that gets the ``too_large`` error frame, a longer one closes the socket with
  1009 (RFC 6455 "message too big"), as docs/protocol.md says;
- **SIGTERM or SIGINT** shuts down cleanly: stop accepting connections (the
  proxy sends newcomers to the other web process), close every socket with
  1012 ("service restart"; the page reconnects by itself), stop proving life
  at once, say goodbye to the liveness table, and exit — within
  :data:`SHUTDOWN_S` seconds whatever the load, with a hard exit as the last
  resort.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger("config.serve")

WS_MAX_MESSAGE = 64 * 1024  # the transport limit (MAX_FRAME_BYTES is the app's)
WS_HANDSHAKE_TIMEOUT_S = 20  # a socket handshake not accepted by then is dropped
# Connections the kernel completes and keeps in line while the loop is busy (the
# listen backlog; Linux caps it at net.core.somaxconn, 4096 on Debian). Twisted's
# default, 50, overflowed in the drill at 500 matches (TcpExtListenOverflows): the
# process carrying every match after the other one's fault took the reconnect wave
# more slowly than the proxy sent it, the kernel dropped the SYNs past 50, and each
# dropped one cost its socket a retransmit (1 s, then 3 s), HAProxy's connect timeout
# and a retry.
LISTEN_BACKLOG = 1024
SHUTDOWN_S = 10.0  # the whole shutdown, start to exit
DRAIN_S = 3.0  # of which: waiting for sockets to close after the 1012
LEAVE_HOLD_S = 4.0  # of which, before the 1012: holding the seats this process holds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args(argv)

    import django

    django.setup()
    from daphne.server import Server
    from django.conf import settings
    from twisted.internet import reactor

    from config.asgi import application
    from matches.clock import liveness
    from matches.clock.receipt import StampedWebSocketProtocol
    from matches.play import admission, timing
    from matches.realtime import broadcast, periodic

    class WebServer(Server):  # type: ignore[misc]
        ports: list[Any]

        def listen_success(self, port: Any) -> None:
            self.ports.append(port)
            super().listen_success(port)

        def create_application(self, protocol: Any, scope: Any) -> Any:
            # Each socket's queue of frames not read yet: admission control's headroom.
            queue = super().create_application(protocol, scope)
            if queue is not None:
                admission.watch_queue(queue)
            return queue

    # The first requests' imports and compilation, before the reconnect wave meets them.
    from config.warmup import warm_up

    warm_up()
    # The start ends any outage of the whole web tier: credited before any frame (and
    # pushed once the loop runs).
    broadcast.defer_until_bound()
    liveness.beat(timing.now_ms())
    from django.db import connections

    connections.close_all()

    server = WebServer(
        application=application,
        endpoints=[f"tcp:port={args.port}:interface={args.host}:backlog={LISTEN_BACKLOG}"],
        signal_handlers=False,
        websocket_max_message_size=WS_MAX_MESSAGE,
        websocket_max_frame_size=WS_MAX_MESSAGE,
        application_close_timeout=5,
        # A handshake waiting in a reconnect wave is finished, not dropped at 5 s
        # (Daphne's default): a dropped one (HAProxy's 502) had done its reads for
        # nothing and came back to wait again (WS_HANDSHAKE_TIMEOUT_S).
        websocket_handshake_timeout=WS_HANDSHAKE_TIMEOUT_S,
        ping_interval=20,
        ping_timeout=30,
    )
    server.ports = []
    if settings.METRICS_PORT:
        from matches.clock import metrics

        metrics.serve_locally(settings.METRICS_PORT)  # 127.0.0.1 only
    stopping = threading.Event()
    signalled_at: list[float] = []  # when SIGTERM or SIGINT arrived
    tune_gc(settings.GC_THRESHOLD)

    def graceful() -> None:
        if stopping.is_set():
            return
        stopping.set()
        # From now on no frame reaches this process: it proves no more life, and if
        # the whole tier goes, the outage counts from here (not from the drain's end).
        liveness.stop_receiving()
        late = time.monotonic() - signalled_at[0] if signalled_at else 0.0
        log.info(
            "shutting down: no new connections, closing sockets with 1012 "
            "(%.3f s after the signal)",
            late,
        )
        timer = threading.Timer(SHUTDOWN_S, _hard_exit)
        timer.daemon = True
        timer.start()
        for port in server.ports:
            port.stopListening()
        asyncio.ensure_future(_leave())

    async def _leave() -> None:
        # The seats this process holds are held before their sockets close: one whose
        # opponent, on the other process, moves while it reconnects is not charged for
        # the way back (matches/clock/presence.py; the drill at 200 matches charged such
        # seats up to 0.9 s each). Bounded: the sockets close whatever the database does.
        from matches.clock import presence

        at = liveness.stopped_at_ms or timing.now_ms()
        began = time.monotonic()
        held = 0
        try:
            held = await asyncio.wait_for(
                asyncio.get_running_loop().run_in_executor(
                    None, presence.hold_leaving, liveness.process_name(), at
                ),
                timeout=LEAVE_HOLD_S,
            )
        except Exception:
            log.exception("the seats of this process were not all held for the restart")
        log.info("shutting down: %d seats held in %.2f s", held, time.monotonic() - began)
        asked: set[int] = set()
        _close_all(server, asked)
        await _finish(time.monotonic(), asked)

    async def _finish(started: float, asked: set[int]) -> None:
        while time.monotonic() - started < DRAIN_S and any(
            "disconnected" not in c for c in server.connections.values()
        ):
            await asyncio.sleep(0.05)
            # A handshake the application answers only now opens a socket after the
            # first pass (the drill at 500 matches: one such held the drain its whole
            # 3 s, "StampedWebSocketProtocol open"): it is closed with 1012 too.
            _close_all(server, asked)
        left = [p for p, c in server.connections.items() if "disconnected" not in c]
        log.info(
            "shutting down: drained in %.2f s (%d connections still open%s)",
            time.monotonic() - started,
            len(left),
            "".join(f"; {_describe(p)}" for p in left[:5]),
        )
        try:
            await periodic.stop()
            await asyncio.get_running_loop().run_in_executor(None, liveness.retire)
        except Exception:
            log.exception("could not retire cleanly")
        reactor.stop()

    def on_signal(signum: int, frame: Any) -> None:
        # Python runs this on the loop's thread between two of its steps: the shutdown
        # is put first in line, not behind a saturated loop's backlog (the drill at 500
        # matches: reactor.callFromThread ran it 1.0–1.6 s after the signal, while the
        # proxy still sent this process new connections).
        signalled_at.append(time.monotonic())
        first_in_line(asyncio.get_event_loop(), graceful)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    async def start_background() -> None:
        broadcast.bind_loop(asyncio.get_running_loop())  # the start-up beat's pushes go now
        periodic.ensure_started()

    def on_start() -> None:
        # Close an over-long message with 1009 and a closing handshake, so that the
        # client reads the code (dropping the connection at once gave it only 1006).
        server.ws_factory.setProtocolOptions(failByDrop=False)
        # Frames stamped as Daphne reads them, not after our backlog (matches/clock/receipt.py).
        server.ws_factory.protocol = StampedWebSocketProtocol
        asyncio.ensure_future(start_background())

    reactor.callWhenRunning(on_start)
    print(f"Spectacular Bid is serving on http://{args.host}:{args.port}", flush=True)
    server.run()
    if stopping.is_set():
        # Shut down cleanly: everything is committed, the seats held and this process
        # retired. The interpreter's own teardown (the executor's threads, a heap of
        # 170 MB) took another second before the port's process was gone, and a
        # restart of the whole tier waits for that (the drill at 500 matches).
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def first_in_line(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """Run ``callback`` on ``loop`` next, before the callbacks already waiting.

    For a signal handler: Python runs it on the loop's thread between two steps of
    whatever runs there, so the loop's queue of ready callbacks is not being read
    at that instant. ``call_soon_threadsafe`` would append ``callback`` after that
    queue — behind a whole backlog when the loop is saturated. A loop that keeps no
    such queue (not asyncio's own) gets ``call_soon_threadsafe``.
    """
    ready = getattr(loop, "_ready", None)
    wake = getattr(loop, "_write_to_self", None)
    if not isinstance(ready, collections.deque) or wake is None:
        loop.call_soon_threadsafe(callback)
        return
    ready.appendleft(asyncio.Handle(callback, (), loop))
    wake()  # the loop may be waiting in its selector


def tune_gc(threshold: tuple[int, int, int] | None) -> None:
    """Freeze what start-up made and space out collections (``GC_THRESHOLD``).

    Everything alive now (modules, settings, templates, catalogues) lives as long
    as the process: frozen, the collector never scans it again. Python's default
    thresholds ran a collection of the older generations often enough that their
    pauses, which stall every socket of the process, made the p99 of a move
    (``make bench-load``). ``None`` leaves the interpreter's own.
    """
    if threshold is None:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(*threshold)


def _close_all(server: Any, asked: set[int]) -> None:
    """Close every connection not asked yet (``asked``: their ids, updated): an open
    WebSocket with 1012 ("service restart"; the page reconnects by itself), a handshake
    not answered yet and any HTTP connection by dropping it."""
    for protocol in list(server.connections):
        if id(protocol) in asked:
            continue
        try:
            if hasattr(protocol, "serverClose"):
                if protocol.state == protocol.STATE_OPEN:
                    protocol.serverClose(code=1012)
                elif protocol.state == protocol.STATE_CONNECTING and protocol.transport:
                    protocol.transport.loseConnection()  # no socket yet to close with 1012
                else:
                    continue  # closing already, or a proxy's handshake: asked again later
            elif protocol.transport is not None:
                protocol.transport.loseConnection()
            asked.add(id(protocol))
        except Exception:
            log.exception("could not close %r", protocol)


def _describe(protocol: Any) -> str:
    """What a connection left open at the drain's end is (a WebSocket's state, or HTTP)."""
    state = getattr(protocol, "state", None)
    names = {0: "closed", 1: "connecting", 2: "closing", 3: "open", 4: "proxy connecting"}
    what = type(protocol).__name__
    return f"{what} {names.get(state, state)}" if state is not None else what


def _hard_exit() -> None:
    log.warning("shutdown took longer than %.0f s: exiting now", SHUTDOWN_S)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
