"""The match WebSocket: thin. Authenticate, stamp receipt time, call services, forward views.

``/ws/matches/<id>/`` speaks the JSON of PROTOCOL.md; with ``?format=html``
the same socket sends server-rendered fragments for htmx's ws extension
instead of JSON state frames (client → server frames are JSON either way).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from . import broadcast, periodic, services, timers

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


def _language(scope: dict[str, Any]) -> str:
    cookies = scope.get("cookies") or {}
    lang = cookies.get(settings.LANGUAGE_COOKIE_NAME)
    if not lang:
        for name, value in scope.get("headers", []):
            if name == b"accept-language":
                lang = translation.trans_real.parse_accept_lang_header(value.decode("latin-1"))
                lang = lang[0][0] if lang else None
                break
    try:
        return translation.get_supported_language_variant(lang or settings.LANGUAGE_CODE)
    except LookupError:
        return settings.LANGUAGE_CODE


class MatchConsumer(AsyncWebsocketConsumer):
    match_id: int
    audience: str
    html: bool
    language: str

    async def connect(self) -> None:
        # Received-at stamps are taken in receive(); the loop is needed for timers.
        timers.bind_loop(asyncio.get_running_loop())
        periodic.ensure_started()  # heartbeats (and, embedded, sweeps): matches/periodic.py
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        found = await database_sync_to_async(_audience)(self.match_id, user.pk)
        if found is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.audience = found
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.html = query.get("format", ["json"])[0] == "html"
        self.language = _language(self.scope)
        await self.channel_layer.group_add(
            broadcast.group_name(self.match_id, self.audience), self.channel_name
        )
        await self.accept()
        # A (re)connection gets the whole current view; it also re-arms the
        # backstop, which a restarted process would otherwise have lost.
        m, view = await database_sync_to_async(_view_and_rearm)(self.match_id, user)
        await self._send_view(view)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "audience"):
            await self.channel_layer.group_discard(
                broadcast.group_name(self.match_id, self.audience), self.channel_name
            )

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        received_at = services.now_ms()  # the rules time every action on receipt
        if text_data is None:
            await self._send_error("bad_request", self._t("Frames are JSON text."))
            return
        if len(text_data) > services.MAX_FRAME_BYTES:
            await self._send_error("too_large", self._t("That frame is too large."))
            return
        try:
            frame = json.loads(text_data)
        except ValueError:
            await self._send_error("bad_request", self._t("That frame is not JSON."))
            return
        user = self.scope["user"]
        try:
            outcome = await database_sync_to_async(_act)(
                self.match_id, user, frame, received_at, self.language
            )
        except services.ServiceError as e:
            await self._send_error(e.code, e.message, version=e.version)
            if e.code in ("stale", "match_over", "not_started"):
                _, view = await database_sync_to_async(services.current_view)(self.match_id, user)
                await self._send_view(view)
            return
        if outcome.error is not None:
            e = outcome.error
            await self._send_error(e.code, e.message, version=outcome.match.version)
        if isinstance(frame, dict) and frame.get("op") == "sync":
            _, view = await database_sync_to_async(services.current_view)(self.match_id, user)
            await self._send_view(view)
        # Everything else reaches this socket through its group after the commit.

    def _t(self, message: str) -> str:
        with translation.override(self.language):
            return _(message)

    async def match_view(self, event: dict[str, Any]) -> None:
        await self._send_view(event["view"])

    async def _send_view(self, view: dict[str, Any]) -> None:
        if self.html:
            html = await database_sync_to_async(_render, thread_sensitive=False)(
                view, self.language
            )
            await self.send(text_data=html)
        else:
            version = view["match"]["version"]
            await self.send(
                text_data=json.dumps({"type": "state", "version": version, "view": view})
            )

    async def _send_error(self, code: str, message: str, *, version: int | None = None) -> None:
        if self.html:
            from .render import render_error

            with translation.override(self.language):
                await self.send(text_data=render_error(code, message))
        else:
            frame = {"type": "error", "code": code, "message": message, "version": version}
            await self.send(text_data=json.dumps(frame))


def _audience(match_id: int, user_id: int) -> str | None:
    from .models import Match

    m = Match.objects.filter(pk=match_id).first()
    if m is None:
        return None
    seats = m.seats_of(user_id)
    if not seats:
        return None
    return "device" if m.kind == Match.Kind.SAME_DEVICE else f"seat{seats[0]}"


def _view_and_rearm(match_id: int, user: Any) -> tuple[Any, dict[str, Any]]:
    m, view = services.current_view(match_id, user)
    services.rearm(m)
    return m, view


def _act(match_id: int, user: Any, frame: Any, received_at: int, language: str) -> services.Outcome:
    with translation.override(language):
        return services.act(match_id, user, frame, received_at)


def _render(view: dict[str, Any], language: str) -> str:
    from .render import render_fragments

    with translation.override(language):
        return render_fragments(view)
