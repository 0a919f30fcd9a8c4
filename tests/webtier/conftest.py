"""Real web processes (``python -m config.serve``) on the test database.

``redis_env`` gives the processes this run's own channel-layer and liveness
prefixes on the test Redis, so parallel runs never hear each other. The match
tests' people (alice, bob, ...) come from tests/conftest.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import WebProcess, server_env


@pytest.fixture
def redis_env(require_postgres: None, require_redis: str, transactional_db: None) -> dict[str, str]:
    tag = f"sbweb{uuid.uuid4().hex[:8]}"
    return server_env(
        REDIS_URL=require_redis,
        MATCH_SWEEPER="celery",
        CHANNEL_LAYER_PREFIX=tag,
        LIVENESS_PREFIX=tag,
    )


@pytest.fixture
def web_pair(redis_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[WebProcess, WebProcess]]:
    """Two web processes serving the same site through Redis (no proxy)."""
    a = WebProcess(tmp_path, "web-a", redis_env)
    b = WebProcess(tmp_path, "web-b", redis_env)
    try:
        yield a.start(), b.start()
    finally:
        a.stop()
        b.stop()


@pytest.fixture
def embedded_web(transactional_db: None, tmp_path: Path) -> Iterator[WebProcess]:
    """One web process of the embedded default (in-memory layer, its own sweeper)."""
    w = WebProcess(tmp_path, "web", server_env())
    try:
        yield w.start()
    finally:
        w.stop()


def new_casual(alice: Any, bob: Any) -> Any:
    """A casual match through an invite: alice (the inviter) is seat 0, bob seat 1."""
    from matches.lobby.invites import accept_invite, create_invite

    return accept_invite(create_invite(alice).code, bob)


def legal_frame(view: dict[str, Any], version: int) -> dict[str, Any] | None:
    """A legal action for the seat whose view this is, as a bot picks it; None if not its turn."""
    if not view.get("my_turn") or view.get("forced"):
        return None
    if view["phase"] == "auction":
        a = view["auction"]
        op = "decline" if a["can_decline"] else "accept"
        return {"op": op, "version": version}
    if view["phase"] == "play":
        p = view["playable"][0]
        return {"op": "place", "tile": p["tile"], "at": p["at"][0], "version": version}
    return None
