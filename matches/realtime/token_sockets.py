"""Sockets opened with a bot token close the moment the token is revoked or rotated.

Mixed into the match, lobby and arena consumers (first among their bases). Before the
consumer's own ``connect`` runs, a socket that sends ``Authorization: Bearer``
joins the token's group (``accounts.tokens.revocation_group``, named by the
token's hash: no database read). Joining *before* the token is checked leaves
no gap: a revocation that commits before the check makes the check fail, one
that commits after it reaches the group. Revoking sends the group
``token.revoked``, and every socket of that token closes with 4401.
"""

from __future__ import annotations

import contextlib
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from accounts.tokens import digest_of, revocation_group
from matches.realtime.socket_auth import CLOSE_TRY_LATER, CLOSE_UNAUTHENTICATED, bearer_token


class ClosedOnRevoke(AsyncWebsocketConsumer):
    _token_group: str | None = None

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        token = bearer_token(self.scope)
        if token:
            group = revocation_group(digest_of(token))
            try:
                await self.channel_layer.group_add(group, self.channel_name)
            except Exception:
                # No channel layer (Redis): a revocation could not reach this socket.
                await self.accept()
                await self.close(code=CLOSE_TRY_LATER)
                return
            self._token_group = group
        await super().websocket_connect(message)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        if self._token_group is not None:
            with contextlib.suppress(Exception):  # gone with the layer: entries expire
                await self.channel_layer.group_discard(self._token_group, self.channel_name)
        await super().websocket_disconnect(message)

    async def token_revoked(self, event: dict[str, Any]) -> None:
        await self.close(code=CLOSE_UNAUTHENTICATED)
