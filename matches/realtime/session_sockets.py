"""A session's end closes its sockets within a second: logout, password change, deactivation.

Mixed into the match and lobby consumers (before their own bases, beside
``token_sockets.ClosedOnRevoke``, which does the same for bot tokens). Once a
socket knows its user it joins the user's group (:func:`user_group`), then
checks its session once more: an end that committed between the first check
and the join is caught by the second, one after the join reaches the group.

Three events reach the group (sent after the commit, from sync code, by the
receivers connected in ``MatchesConfig.ready``):

- **logout** (``user_logged_out``): ``{"type": "session.ended", "session": tag}``
  where ``tag`` is a hash of the session key (never the key itself). The sockets
  of that session close with **4401** at once; the user's other sessions stay.
- **password change** and **deactivation** (the user row saved with a new
  password hash or ``is_active`` false): ``{"type": "session.check"}``. Each
  socket reads its session again (``socket_auth.scope_user``: the session's
  auth hash, the account active) and closes with 4401 if it no longer holds.
  That includes the sockets of the browser that changed its password: Django
  keeps that browser logged in under a *new* session key (``cycle_key``), so
  the key its sockets were opened with is gone; the page opens a new socket
  with the new cookie.

After the close, frames still in flight from the client are ignored.

**Whatever the layer's group expiry.** The in-memory layer forgets a group
member after ``group_expiry`` (a day by default); the Redis pub/sub layer keeps
it while the process lives. A socket re-checks its session and joins its group
again every :func:`refresh_every_s` (half the layer's expiry, at most an hour),
so no socket outlives a session end it could not hear.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from matches.play import db
from matches.realtime import budgets
from matches.realtime.base import refuse
from matches.realtime.socket_auth import CLOSE_UNAUTHENTICATED, cookies, scope_user

log = logging.getLogger(__name__)

ENDED = "session.ended"
CHECK = "session.check"
MAX_REFRESH_S = 3600.0


def user_group(user_id: int) -> str:
    return f"session.user.{user_id}"


def session_tag(session_key: str | None) -> str:
    """What a logout names its session by: a hash, so the key never travels."""
    return hashlib.sha256(f"sb-session:{session_key or ''}".encode()).hexdigest()[:32]


def refresh_every_s(layer: Any) -> float:
    expiry = float(getattr(layer, "group_expiry", MAX_REFRESH_S * 2) or MAX_REFRESH_S * 2)
    return max(0.5, min(MAX_REFRESH_S, expiry / 2))


class ClosedWithSession(AsyncWebsocketConsumer):
    """The socket closes (4401) when the session it was opened with ends."""

    closed_by_server = False
    counted = False  # in matches.realtime.budgets' count of the user's sockets
    _session_user_id: int | None = None
    _session_refresh: asyncio.Task[None] | None = None

    def _own_tag(self) -> str | None:
        key = cookies(self.scope).get(settings.SESSION_COOKIE_NAME)
        return session_tag(key) if key else None

    async def watch_session(self, user: Any, *, confirm: bool = True) -> bool:
        """Join ``user``'s group and confirm the session still holds; ``False``: refuse (4401).

        ``confirm=False``: the caller confirms it itself, with :func:`session_holds` in the
        next call it makes on a database thread (a match socket's first view: one trip
        fewer per handshake, a thousand fewer in a reconnect wave)."""
        # A layer that is down raises here: the caller refuses with 1013, as for its groups.
        await self.channel_layer.group_add(user_group(user.pk), self.channel_name)
        self._session_user_id = user.pk
        if confirm and not await self._still_valid():
            return False
        self._session_refresh = asyncio.ensure_future(self._keep_joined())
        return True

    async def counted_if_held(self, session_holds: bool) -> bool:
        """The end of a handshake after :meth:`watch_session`: refused with 4401 if the
        session ended while the socket opened, or past the account's sockets (4430,
        ``budgets.open_socket``); else counted (``self.counted``: the consumer's
        ``disconnect`` pairs it with ``budgets.close_socket``)."""
        if not session_holds:
            await refuse(self, CLOSE_UNAUTHENTICATED)  # it ended while this socket opened
            return False
        too_many = budgets.open_socket(self._session_user_id or 0)
        if too_many is not None:
            await refuse(self, too_many)
            return False
        self.counted = True
        return True

    async def _still_valid(self) -> bool:
        return bool(await db.run(session_holds, self.scope, self._session_user_id))

    async def _keep_joined(self) -> None:
        every = refresh_every_s(self.channel_layer)
        joined = time.monotonic()
        while True:
            await asyncio.sleep(max(0.0, joined + every - time.monotonic()))
            joined = time.monotonic()
            with contextlib.suppress(Exception):  # the layer is down: LayerSafe closes us
                assert self._session_user_id is not None
                await self.channel_layer.group_add(
                    user_group(self._session_user_id), self.channel_name
                )
            if not await self._still_valid():
                await self._end_session()
                return

    async def websocket_receive(self, message: dict[str, Any]) -> None:
        if self.closed_by_server:
            return  # closed: what the client still sends is not read
        await super().websocket_receive(message)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        task = self._session_refresh
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._session_user_id is not None:
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(
                    user_group(self._session_user_id), self.channel_name
                )
        await super().websocket_disconnect(message)

    async def _end_session(self) -> None:
        if self.closed_by_server:
            return
        self.closed_by_server = True
        await self.close(code=CLOSE_UNAUTHENTICATED)

    async def session_ended(self, event: dict[str, Any]) -> None:
        if event.get("session") == self._own_tag():
            await self._end_session()

    async def session_check(self, event: dict[str, Any]) -> None:
        if not self.closed_by_server and not await self._still_valid():
            await self._end_session()


# --- the senders (sync code: views, admin, signals) -----------------------------------


def session_holds(scope: dict[str, Any], user_id: int | None) -> bool:
    """Whether the socket's session (or token) still belongs to ``user_id`` (a database
    thread's call). Read again after the socket joined its user's group: a logout
    between the first read and the join sent its message to nobody."""
    now = scope_user(scope)
    return now is not None and now.pk == user_id


def _send_after_commit(user_id: int, message: dict[str, Any]) -> None:
    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(user_group(user_id), message)
        except Exception:
            # The session is over in the database: a reconnection is refused.
            log.exception("could not tell the sockets of user %s that a session ended", user_id)

    transaction.on_commit(send)


def on_logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is None or request is None:
        return
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        _send_after_commit(user.pk, {"type": ENDED, "session": session_tag(key)})


def _auth_of(user: Any) -> tuple[str, bool]:
    return (str(user.password), bool(user.is_active))


def on_user_loaded(sender: Any, instance: Any, **kwargs: Any) -> None:
    instance._sb_auth_was = _auth_of(instance)


def on_user_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    was = getattr(instance, "_sb_auth_was", None)
    now = _auth_of(instance)
    instance._sb_auth_was = now
    if created or was is None or was == now:
        return
    _send_after_commit(instance.pk, {"type": CHECK})


def connect_receivers() -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.signals import user_logged_out
    from django.db.models.signals import post_init, post_save

    user_model = get_user_model()
    user_logged_out.connect(on_logged_out, dispatch_uid="session-sockets-logout")
    post_init.connect(on_user_loaded, sender=user_model, dispatch_uid="session-sockets-init")
    post_save.connect(on_user_saved, sender=user_model, dispatch_uid="session-sockets-save")
