"""A seat's socket opens in as few trips to the match threads as it can.

After a restart every socket of every match reconnects at once (1,000 handshakes at
500 matches), and each handshake waits in the match threads' queue once per trip:
one to find the user and the seat, one to look at the session again (now that the
socket listens for its logout), note the seat held here and read the first view.
"""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from matchplay import new_casual
from wsclient import open_socket

from matches.play import db

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_seats_socket_opens_in_two_trips_to_the_match_threads(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    match = await database_sync_to_async(new_casual)(alice, bob)
    trips: list[str] = []
    run = db.run

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        trips.append(getattr(fn, "__name__", repr(fn)))
        return await run(fn, *args, **kwargs)

    monkeypatch.setattr(db, "run", counted)
    sock = await open_socket(match.pk, bob)
    try:
        assert sock.frames[0]["version"] == 0  # the first view, whole
        assert trips == ["_open", "_first_view"]
    finally:
        await sock.comm.disconnect()
