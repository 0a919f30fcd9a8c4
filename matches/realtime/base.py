"""What every socket of the platform shares: refusing, reading frames, its language,
and surviving the channel layer going away (:class:`LayerSafe`).

The match, lobby and echo consumers build on this; none imports another.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from autobahn.exception import Disconnected  # Daphne's WebSocket transport
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils import translation

from matches.play.frames import MAX_FRAME_BYTES
from matches.realtime.socket_auth import CLOSE_TRY_LATER, cookies, header

log = logging.getLogger(__name__)


def language_of(scope: dict[str, Any]) -> str:
    """The socket's UI language: the language cookie, else Accept-Language, else Japanese."""
    lang = cookies(scope).get(settings.LANGUAGE_COOKIE_NAME)
    if not lang:
        accept = header(scope, b"accept-language")
        if accept:
            parsed = translation.trans_real.parse_accept_lang_header(accept)
            lang = parsed[0][0] if parsed else None
    try:
        return translation.get_supported_language_variant(lang or settings.LANGUAGE_CODE)
    except LookupError:
        return settings.LANGUAGE_CODE


def frame_too_large(text: str) -> bool:
    """Over :data:`MAX_FRAME_BYTES` bytes of UTF-8 (not characters)."""
    limit = MAX_FRAME_BYTES
    if len(text) > limit:
        return True
    return len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit


def parse_json(text: str) -> Any:
    """The frame as JSON; ``ValueError`` for anything unparseable, however deep it nests."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


async def refuse(consumer: AsyncWebsocketConsumer, code: int) -> None:
    """Accept, then close with ``code``: the client sees the close code, not a failed handshake."""
    await consumer.accept()
    await consumer.close(code=code)


class LayerSafe:
    """A consumer that survives its channel layer going away.

    Channels reads the consumer's channel in the same loop as the client's
    frames; when Redis stops answering that read raises, and the consumer died
    with a 1011 (or, before the handshake, an HTTP 500). Here a failed read
    becomes a ``layer.lost`` event instead: the socket is closed with 1013 ("try
    again later", on which the page reconnects by itself). Channels assigns
    ``channel_receive`` in ``__call__``; the property wraps what it assigns.
    """

    accepted = False
    _raw_receive: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)  # type: ignore[misc]
        except Exception:
            if hasattr(self, "channel_name"):
                raise
            # The layer could not even make this socket's channel (Redis is down):
            # answer the handshake ourselves, accepted then closed with 1013.
            log.warning("no channel layer for a new socket; refused with 1013")
            message = await receive()
            if message.get("type") == "websocket.connect":
                await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_TRY_LATER})

    # What the server sends a socket whose closing has begun (the 1012 of a restart, the
    # client's own close) is for nobody: Daphne's transport refuses it, and the consumer
    # died with "Exception inside application: Attempt to send on a closed protocol",
    # logged at ERROR in every drill (a move answered as its process stops). The move is
    # committed all the same, and the client resynchronizes when it connects again.
    _raw_send: Any = None

    @property
    def base_send(self) -> Any:
        return self._send_unless_closed

    @base_send.setter
    def base_send(self, send: Any) -> None:
        self._raw_send = send

    async def _send_unless_closed(self, message: dict[str, Any]) -> None:
        try:
            await self._raw_send(message)
        except Disconnected:
            log.debug("%s to a socket already closing: dropped", message.get("type"))

    @property
    def channel_receive(self) -> Any:
        return self._safe_receive

    @channel_receive.setter
    def channel_receive(self, receive: Any) -> None:
        self._raw_receive = receive

    async def _safe_receive(self) -> dict[str, Any]:
        try:
            return dict(await self._raw_receive())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("the channel layer does not answer; closing the socket with 1013")
            await asyncio.sleep(1.0)  # no busy loop while the layer is down
            return {"type": "layer.lost"}

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale database connections before every handler, on a
        # thread hop per message. These consumers never touch the ORM on the
        # loop: their database work runs on the match threads (matches/play/db.py).
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def layer_lost(self, event: dict[str, Any]) -> None:
        if self.accepted:
            await self.close(code=CLOSE_TRY_LATER)  # type: ignore[attr-defined]
        # Before the handshake, connect() finds the layer down itself (group_add).
