"""Let Daphne send the RFC 6455 close codes 1012 and 1013.

Autobahn's ``sendClose`` accepts only 1000 and 3000–4999, so a consumer closing
with 1012 ("service restart", a web process shutting down) or 1013 ("try
again later", the channel layer unreachable) made Daphne raise instead of
closing. Those two are exactly the codes on which htmx's WebSocket extension
reconnects by itself, so the match page needs them. Codes Autobahn accepts go
the usual way; the others are sent as a plain close frame.
"""

from __future__ import annotations

from typing import Any


def install() -> None:
    try:
        from daphne.ws_protocol import WebSocketProtocol
    except ImportError:  # not served by Daphne
        return
    if getattr(WebSocketProtocol.serverClose, "sb_patched", False):
        return

    def server_close(self: Any, code: int | None = None) -> None:
        code = 1000 if code is None else code
        if code == 1000 or 3000 <= code <= 4999:
            self.sendClose(code=code)
        elif self.state == self.STATE_OPEN:
            self.sendCloseFrame(code=code, isReply=False)

    server_close.sb_patched = True  # type: ignore[attr-defined]
    WebSocketProtocol.serverClose = server_close
