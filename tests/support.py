"""Plain helpers the test folders share: ``from tests.support import ...``.

Only functions, classes and constants live here; the fixtures built on them
(alice, bob, carol, dave, outsider, clock) are in ``tests/conftest.py``. A fixture
imported into a conftest would be registered a second time, so none is here.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.db import transaction

import engine
from matches.lobby.invites import accept_invite, create_invite, create_same_device
from matches.models import Match
from matches.play import timing
from matches.play.act import Outcome, act
from matches.play.audience import Change
from matches.play.seating import new_match
from matches.realtime.lobby_consumer import LobbyConsumer
from matches.signals import match_changed

PASSWORD = "correct horse battery staple"  # everyone's, in the folders that log in
START = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)  # where the clock fixture stands
# The real hasher costs ~0.5 s a user; tests that make many users with passwords use this.
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(name: str, password: str | None = None, **extra: Any) -> Any:
    """A user called ``name``; without a password (unusable) unless one is given."""
    return get_user_model().objects.create_user(name, password=password, **extra)


def use_embedded_default(settings: Any, *, deal_seed: int | None = None) -> Any:
    """The embedded default: in-memory channel layer, the sweeper in the web process,
    no background loops; random deals unless ``deal_seed`` is given."""
    settings.MATCH_SWEEPER = "web"
    settings.REDIS_URL = ""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "matches.realtime.layers.InMemoryLayer"}}
    settings.DEAL_SEED = deal_seed
    settings.MATCH_BACKGROUND = False
    return settings


def frame_for(action: engine.Action, version: int | None = None) -> dict[str, Any]:
    """The client frame (PROTOCOL.md) that asks for ``action``, at ``version`` if given."""
    frame: dict[str, Any] = {"op": action.kind}
    if version is not None:
        frame["version"] = version
    if action.kind == "place":
        assert action.tile is not None
        frame["tile"] = list(action.tile)
        frame["at"] = (
            None if action.at is None else {"tile": list(action.at[0]), "side": action.at[1]}
        )
    if action.kind == "bid":
        frame["amount"] = action.amount
    return frame


# What a browser on this site sends with every WebSocket (matches/realtime/socket_auth.py).
SITE_HEADERS = [(b"host", b"localhost"), (b"origin", b"http://localhost")]


def live_casual(alice: Any, bob: Any) -> Match:
    """A casual match through an invite (alice seat 0, bob seat 1), both Starts pressed."""
    m = accept_invite(create_invite(alice).code, bob)
    for user in (alice, bob):
        m.refresh_from_db()
        act(m.pk, user, {"op": "start", "version": m.version}, timing.now_ms())
    m.refresh_from_db()
    assert m.status == Match.Status.LIVE
    return m


async def connect_lobby(user: Any) -> WebsocketCommunicator:
    """A lobby socket (``/ws/lobby/``) for ``user``, connected."""
    comm = WebsocketCommunicator(LobbyConsumer.as_asgi(), "/ws/lobby/", headers=SITE_HEADERS)
    comm.scope["user"] = user
    connected, _ = await comm.connect()
    assert connected
    return comm


def database_waits(run: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``run`` returned, and each message this connection sent PostgreSQL that made
    it wait for an answer (a simple ``Query`` or an extended protocol's ``Sync``), read
    off libpq's own trace of the wire."""
    import psycopg
    from django.db import connection

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    fd, path = tempfile.mkstemp()
    try:
        pgconn.trace(fd)
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            out = run()
        finally:
            pgconn.untrace()
        with open(path) as f:
            sent = [line.split("\t") for line in f if line.startswith("F\t")]
    finally:
        os.close(fd)
        os.unlink(path)
    return out, [
        f[2].strip() + (" " + f[3].strip() if len(f) > 3 else "")
        for f in sent
        if f[2].strip() in ("Query", "Sync")
    ]


@contextlib.contextmanager
def capture_changes() -> Iterator[list[Change]]:
    """Every change ``matches.play`` publishes (after its commit) while inside."""
    seen: list[Change] = []

    def keep(sender: Any, change: Change, **kwargs: Any) -> None:
        seen.append(change)

    match_changed.connect(keep, dispatch_uid="tests.capture_changes")
    try:
        yield seen
    finally:
        match_changed.disconnect(dispatch_uid="tests.capture_changes")


class Tables:
    """Make matches through ``matches.play``, act in them, and play them on."""

    def ranked(self, a: Any, b: Any) -> Match:
        # The ranked queue's constructor, until a public one exists.
        with transaction.atomic():
            return new_match(Match.Kind.RANKED, a, b)

    def casual(self, a: Any, b: Any) -> Match:
        return accept_invite(create_invite(a).code, b)

    def same_device(self, a: Any, guest: str = "Guest") -> Match:
        return create_same_device(a, guest)

    def fresh(self, m: Match) -> Match:
        return Match.objects.select_related("player0", "player1").get(pk=m.pk)

    def act(self, m: Match, user: Any, op: str, **extra: Any) -> Outcome:
        frame = {"op": op, "version": self.fresh(m).version, **extra}
        return act(m.pk, user, frame, timing.now_ms())

    def start(self, m: Match) -> Match:
        """Press 開始 for every seat."""
        players = [m.player0] if m.player1_id is None else [m.player0, m.player1]
        for u in players:
            self.act(m, u, "start")
        return self.fresh(m)

    def resign(self, m: Match, user: Any) -> Match:
        self.act(m, user, "resign")
        return self.fresh(m)

    def user_at(self, m: Match, seat: int) -> Any:
        return m.player0 if seat == 0 or m.player1_id is None else m.player1

    def play(self, m: Match, decisions: int, *, all_in: bool = False) -> Match:
        """Make up to ``decisions`` real decisions (first legal action), continuing hands.

        ``all_in`` bids the most one can afford in every auction, which ends the
        match by balance at the first auction (a bidder pays its whole balance).
        """
        for _ in range(decisions):
            m = self.fresh(m)
            if m.is_over:
                break
            state = engine.from_dict(m.state)
            if state.phase == engine.HAND_OVER:
                for seat in (0, 1) if m.player1_id else (0,):
                    self.act(m, self.user_at(m, seat), "continue")
                continue
            seat = state.to_act
            if state.awaiting_reveal:
                self.act(m, self.user_at(m, seat), "reveal")
                continue
            legal = engine.legal_actions(state)
            action = legal[-1] if all_in and state.phase == engine.AUCTION else legal[0]
            frame = frame_for(action)
            self.act(m, self.user_at(m, seat), frame.pop("op"), **frame)
        return self.fresh(m)

    def until_drawn(self, m: Match, most: int = 400) -> tuple[Match, int]:
        """Play decisions until a turn's draws wait for its decision (the log's last event
        is a draw): the match then, and the drawer's seat."""
        from matches.models import MatchEvent

        for _ in range(most):
            last = MatchEvent.objects.filter(match=m).order_by("-id").first()
            if last is not None and last.data.get("type") == "draw":
                return self.fresh(m), int(last.data["player"])
            m = self.play(m, 1)
            assert not m.is_over, "the match ended before a turn drew"
        raise AssertionError(f"no turn drew in {most} decisions")
