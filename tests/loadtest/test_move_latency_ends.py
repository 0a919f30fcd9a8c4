"""When the harness counts a move as arrived (loadtest/bots.py, ``Table.on_state``).

A move's latency runs from the mover's send to the opponent's first frame with a newer
version. After our outage the server gives the time back as a change of its own (a
``credit``): such a frame, reaching the opponent while the move is on its way, is not
the move, and must not end its latency early.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

from loadtest.bots import Account, Behaviour, Move, Recorder, Table
from loadtest.view import Seen


def _table() -> tuple[Table, Recorder]:
    rec = Recorder()
    fleet = SimpleNamespace(rec=rec)
    table = Table(fleet, Account("a", "k"), Account("b", "k"), Behaviour(), random.Random(1))  # type: ignore[arg-type]
    return table, rec


def _seen(version: int, events: list[tuple[int, str, int | None]]) -> Seen:
    return Seen(
        version=version,
        status="live",
        phase="play",
        seat=1,
        my_turn=True,
        can_start=False,
        can_continue=False,
        events=events,
    )


def _move(version: int) -> Move:
    return Move("place", 7, 0, False, version, 10.0, 9.0, 1.0, 60_000, 0)


def test_a_credit_only_frame_leaves_the_move_on_its_way_and_the_move_ends_it() -> None:
    table, rec = _table()
    opponent = SimpleNamespace(seat=1, html=False)
    move = table.pending[0] = _move(version=5)
    table.on_state(opponent, _seen(6, [(40, "credit", None)]), at=10.2)  # type: ignore[arg-type]
    assert table.pending[0] is move and rec.moves == []
    table.on_state(opponent, _seen(7, [(41, "place", 0)]), at=10.5)  # type: ignore[arg-type]
    assert table.pending[0] is None and rec.moves == [move]
    assert round(move.latency_ms) == 500


def test_a_page_socket_reads_no_events_so_its_first_newer_version_ends_the_move() -> None:
    table, rec = _table()
    page = SimpleNamespace(seat=1, html=True)
    move = table.pending[0] = _move(version=5)
    table.on_state(page, _seen(6, []), at=10.3)  # type: ignore[arg-type]
    assert rec.moves == [move] and move.opp_html and round(move.latency_ms) == 300
