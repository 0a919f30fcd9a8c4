"""Spectators' HTML is rendered once per audience, version and language."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from matchplay import frame_for, new_casual
from wsclient import db_state, login_headers, open_socket

import engine
from config.asgi import application
from matches.ui import audience_render

pytestmark = pytest.mark.django_db(transaction=True)


async def _html_socket(match_id: int, user: Any, lang: str) -> WebsocketCommunicator:
    headers = await database_sync_to_async(login_headers)(user)
    headers.append((b"accept-language", lang.encode()))
    comm = WebsocketCommunicator(
        application, f"/ws/matches/{match_id}/?format=html", headers=headers
    )
    connected, _ = await comm.connect(timeout=10)
    assert connected
    return comm


async def _until_version(comm: WebsocketCommunicator, version: int) -> str:
    """Receive fragments until the status fragment shows ``version``; all of them, joined."""
    got = []
    while True:
        text = await comm.receive_from(timeout=10)
        got.append(text)
        if f'data-version="{version}"' in text:
            return "".join(got)


async def test_a_move_is_rendered_once_for_all_its_spectators_of_a_language(
    alice: Any, bob: Any, carol: Any, dave: Any, outsider: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 4
    match = await database_sync_to_async(new_casual)(alice, bob)
    a = await open_socket(match.pk, alice)
    b = await open_socket(match.pk, bob)
    watchers = {
        "ja": [await _html_socket(match.pk, u, "ja") for u in (carol, dave)],
        "en": [await _html_socket(match.pk, outsider, "en")],
    }
    try:
        for comms in watchers.values():
            for c in comms:
                await _until_version(c, 0)
        await a.send({"op": "start", "version": 0})
        await b.state_at(1)
        await b.send({"op": "start", "version": 1})
        await a.state_at(2)
        for comms in watchers.values():
            for c in comms:
                await _until_version(c, 2)
        _, raw = await database_sync_to_async(db_state)(match.pk)
        action = engine.legal_actions(engine.from_dict(raw))[0]
        before = audience_render.renders
        await (a if action.player == 0 else b).send(frame_for(action, 2))
        ja = [await _until_version(c, 3) for c in watchers["ja"]]
        (en,) = [await _until_version(c, 3) for c in watchers["en"]]
        # Two languages: two renders for three spectators, and the same text to each of a language.
        assert audience_render.renders - before == 2
        assert ja[0] == ja[1] and 'id="sb-board"' in ja[0]
        assert en != ja[0]  # the English page is its own
        # Spectators see no hand: the fragments name no tile of either seat's hand.
        assert "data-at=" not in ja[0] and "data-at=" not in en
    finally:
        await a.comm.disconnect()
        await b.comm.disconnect()
        for comms in watchers.values():
            for c in comms:
                await c.disconnect()


def test_the_cache_keeps_only_the_latest_renders(monkeypatch: Any) -> None:
    monkeypatch.setattr(audience_render, "KEEP", 2)
    monkeypatch.setattr(audience_render, "_cache", type(audience_render._cache)())
    calls: list[int] = []

    def fake_render(view: dict[str, Any], sent: dict[str, str]) -> str:
        calls.append(view["match"]["version"])
        sent["sb-status"] = f'<div id="sb-status" data-version="{view["match"]["version"]}">'
        return ""

    monkeypatch.setattr(audience_render, "render_changed", fake_render)
    sent: dict[str, str] = {}
    for v in (1, 2, 1, 3, 1):
        audience_render.changed(7, {"match": {"version": v}, "events": []}, "ja", sent)
    # 1 and 2 rendered; 1 again from the cache; 3 pushes 2 out; 1 still kept (recently used).
    assert calls == [1, 2, 3]
    # A socket is sent a fragment only when it differs from what it sent last.
    assert audience_render.changed(7, {"match": {"version": 1}, "events": []}, "ja", sent) == ""
