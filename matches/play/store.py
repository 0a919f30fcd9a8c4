"""The match row: read it locked, write a change, publish it after the commit.

The pattern of every write (after Zulip's ``do_*`` actions): lock the ``Match``
row (this is what serializes two frames for the same match, a frame racing the
deadline sweeper, and two Daphne processes), change it, then one ``UPDATE``
(state, version and the next wake-up time) and one ``INSERT`` of the events.
Each audience's frame is made from the state in hand (nothing is read back) and
handed to :data:`matches.signals.match_changed` only after the commit.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import orjson
import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import JSONField
from django.utils.translation import gettext as _
from psycopg import pq
from psycopg.types.json import Json, Jsonb

import engine
from matches.models import Match, MatchEvent
from matches.play import jsontext, stages, timing
from matches.play.audience import Change, audience_of, view_for
from matches.play.compiled import OneRow
from matches.play.errors import ServiceError
from matches.play.timing import next_wakeup
from matches.signals import match_changed


def match_query() -> Any:
    """Matches with both players' rows, unordered: a read without a lock (views, a retried push)."""
    return Match.objects.select_related("player0", "player1").order_by()


# A match with both players' rows by its id (every socket's first view), compiled once.
_match_row = OneRow(lambda pk: match_query().filter(pk=pk), int)


def locked_match(match_id: int, *, skip_locked: bool = False) -> Match | None:
    """The match, locked until the transaction ends (one statement, compiled once).

    Read with a plain cursor and made a model as the ORM makes one (``Model.from_db``,
    each column through the converters the ORM would apply): a raw queryset worked out
    its columns and the model's constructor order again on every call, 0.4 ms of a move."""
    conn = _this_thread()
    sql = _select_sql(conn.vendor, skip_locked)
    names, converters = _row_plan(conn)
    row = _with_begin(conn, sql, match_id)
    if row is _NOT_FIRST:
        with conn.cursor() as cursor:
            cursor.execute(sql, [match_id])
            row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for i, col, funcs in converters:
        for f in funcs:
            values[i] = f(values[i], col, conn)
    return Match.from_db(conn.alias, names, values)


_NOT_FIRST = object()


def _with_begin(conn: Any, sql: str, match_id: int) -> Any:
    """The locked row read with the transaction's BEGIN, in one round trip, when it is
    the transaction's first statement (PostgreSQL); else :data:`_NOT_FIRST`.

    psycopg sends a transaction's BEGIN alone and waits for its answer before the first
    statement: a move waited for the database once more than it needs to, and under
    load every answer is also a wait for the interpreter's lock. Here the two go as one
    simple query (the id bound by the client, as a number). psycopg is told it is in
    autocommit so that it sends no BEGIN of its own: the transaction is open all the
    same (its status says so), and Django's commit or rollback at the block's end, then
    its return to autocommit, go as always."""
    pg = conn.connection
    if (
        conn.vendor != "postgresql"
        or not conn.in_atomic_block
        or pg is None
        or pg.autocommit
        or pg._pipeline is not None
        or pg.pgconn.transaction_status != pq.TransactionStatus.IDLE
    ):
        return _NOT_FIRST
    begin = pg._get_tx_start_command().decode()
    pg.autocommit = True  # status IDLE: allowed; the BEGIN below opens the transaction
    with conn.make_cursor(psycopg.ClientCursor(pg)) as cursor:
        cursor.execute(f"{begin}; {sql}", [int(match_id)])
        cursor.nextset()
        return cursor.fetchone()


# --- the hot path's statements, compiled once ---------------------------------------
#
# Every move runs one SELECT … FOR UPDATE, one UPDATE and one INSERT. Django's
# ORM builds each statement's SQL anew on every call, which cost more than the
# rules engine's whole move; these three are compiled once per database vendor,
# by the ORM itself, and only their parameters change (each value prepared by
# its field, exactly as Model.save and bulk_create prepare it).


@functools.cache
def _select_sql(vendor: str, skip_locked: bool) -> str:
    qs = Match.objects.filter(pk=0).order_by().select_for_update(skip_locked=skip_locked)
    sql, params = qs.query.sql_with_params()
    assert params == (0,), params
    return str(sql)


_plans: weakref.WeakKeyDictionary[Any, tuple[list[str], list[tuple[int, Any, list[Any]]]]] = (
    weakref.WeakKeyDictionary()
)


def _row_plan(conn: Any) -> tuple[list[str], list[tuple[int, Any, list[Any]]]]:
    """The select's field names, and each column's converters (only those that have
    any), for ``conn`` (a thread's connection: its converters are its own)."""
    plan = _plans.get(conn)
    if plan is None:
        fields = Match._meta.concrete_fields
        converters = []
        for i, field in enumerate(fields):
            col = field.get_col(Match._meta.db_table)
            funcs = [*conn.ops.get_db_converters(col), *col.get_db_converters(conn)]
            if isinstance(field, JSONField):
                # The JSON columns (the state above all) read with orjson, not json.loads.
                funcs = [_json_from_db if f == field.from_db_value else f for f in funcs]
            if funcs:
                converters.append((i, col, funcs))
        plan = _plans[conn] = ([f.attname for f in fields], converters)
    return plan


def _json_from_db(value: Any, expression: Any, connection: Any) -> Any:
    """``JSONField.from_db_value`` with orjson (text this server wrote); what orjson
    cannot read (an integer past 64 bits, say) as Django reads it."""
    if not isinstance(value, (str, bytes)):
        return value
    try:
        return jsontext.loads(value)
    except ValueError:
        try:
            return json.loads(value)
        except ValueError:
            return value


def _json_dumps(value: Any) -> bytes:
    """psycopg's ``Jsonb`` writes a column's JSON with this: orjson where it can (the
    state, the largest parameter of every move: ~8× the standard library), else the
    standard library as Django would."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value).encode()


def _prepared(field: Any, value: Any, conn: Any) -> Any:
    """``field.get_db_prep_save(value)``, a JSON value's text made by :func:`_json_dumps`.

    ``conn`` is this thread's connection itself: through Django's ``connection`` proxy
    every attribute the field reads is a lookup of the thread's connection (asgiref's
    ``Local``), and a move's UPDATE alone took 117 µs to prepare, 36 µs without it."""
    p = field.get_db_prep_save(value, conn)
    if isinstance(p, (Json, Jsonb)):  # PostgreSQL's JSON parameters: dumped at execute
        p.dumps = _json_dumps
    return p


@functools.cache
def _update_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    fields = tuple(f for f in Match._meta.concrete_fields if not f.primary_key)
    qn = connection.ops.quote_name
    sets = ", ".join(f"{qn(f.column)} = %s" for f in fields)
    pk = qn(Match._meta.pk.column)
    return f"UPDATE {qn(Match._meta.db_table)} SET {sets} WHERE {pk} = %s", fields


@functools.cache
def _insert_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    fields = tuple(f for f in MatchEvent._meta.concrete_fields if not f.primary_key)
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    marks = ", ".join("%s" for _ in fields)
    return f"INSERT INTO {qn(MatchEvent._meta.db_table)} ({cols}) VALUES ({marks})", fields


def _this_thread() -> Any:
    """This thread's connection itself (not the ``connection`` proxy: see :func:`_prepared`)."""
    return connections[DEFAULT_DB_ALIAS]


def _write_row(m: Match, conn: Any = None) -> None:
    """``m.save()`` of every column, without building the statement again."""
    conn = conn or _this_thread()
    sql, _fields = _update_sql(conn.vendor)
    with conn.cursor() as cursor:
        cursor.execute(sql, _row_params(m, conn))


def _row_params(m: Match, conn: Any) -> list[Any]:
    _sql, fields = _update_sql(conn.vendor)
    return [*(_prepared(f, getattr(m, f.attname), conn) for f in fields), m.pk]


# --- many changes in one round trip ----------------------------------------------------

_batches = threading.local()


@contextlib.contextmanager
def writes_together() -> Any:
    """Inside, :func:`save_change` queues each change's row and events, as they are at that
    moment, and they are written on the way out: one ``UPDATE`` and one ``INSERT`` for
    them all, in one round trip (psycopg's pipeline). Only inside a transaction, for code
    that reads nothing back it wrote meanwhile (what each change publishes is made from
    the state in hand, as always).

    For the changes of many matches at once: an outage credited to all 463 of a drill's
    matches took 2.3 s before the first web process of a restarted tier could listen,
    and 5.8 s in the second (a round trip per statement, each a wait for a CPU on a
    loaded machine), every match's row locked meanwhile."""
    if getattr(_batches, "rows", None) is not None:
        yield  # an outer batch writes these too
        return
    _batches.rows, _batches.events = [], []
    try:
        yield
        rows, events = _batches.rows, _batches.events
    finally:
        _batches.rows = _batches.events = None
    if not rows:
        return
    conn = _this_thread()
    with _together(conn), conn.cursor() as cursor:
        cursor.executemany(_update_sql(conn.vendor)[0], rows)
        if events:
            cursor.executemany(_insert_sql(conn.vendor)[0], events)


def _now_as_text(params: list[Any]) -> list[Any]:
    """``params`` with each JSON value's text made now, not when the statement runs: a
    queued change's row is written as it was when it was saved, whatever happens to the
    model (or a dict it holds) before the batch goes."""
    for p in params:
        if isinstance(p, (Json, Jsonb)):
            text = p.dumps(p.obj)
            p.dumps = lambda _obj, text=text: text
    return params


def _together(conn: Any) -> Any:
    """The statements inside go to the database in one round trip, where the driver can
    (psycopg's pipeline mode, on PostgreSQL): a move's UPDATE and INSERT waited for each
    other's answer, and under load every answer is a wait for the interpreter's lock."""
    raw = conn.connection if conn.vendor == "postgresql" else None
    pipeline = getattr(raw, "pipeline", None)
    return pipeline() if pipeline is not None else contextlib.nullcontext()


def _commit_along(conn: Any) -> bool:
    """The transaction's COMMIT, in the same round trip as its last statements.

    Only where they go together (PostgreSQL's pipeline: :func:`_together`) and only in
    the outermost atomic block (a savepoint is not ours to end). A move waited for four
    answers of the database (BEGIN, its row, its writes, COMMIT) and under load every
    answer is also a wait for the interpreter's lock; now three. The pipeline ends once
    the COMMIT is answered, so a failed commit raises here, before anything is published;
    Django's own commit at the block's end then finds no transaction open (psycopg sends
    nothing) and runs the on-commit hooks — the pushes — after the COMMIT is durable.
    Whether the COMMIT was sent."""
    if conn.vendor != "postgresql" or getattr(conn.connection, "_pipeline", None) is None:
        return False
    if not conn.in_atomic_block or conn.savepoint_ids or len(conn.atomic_blocks) != 1:
        return False
    if not conn.commit_on_exit:
        return False
    with conn.connection.cursor() as cursor:
        cursor.execute("COMMIT")
    return True


def save_change(
    m: Match,
    state: engine.MatchState | None,
    events: list[dict[str, Any]],
    *,
    before: engine.MatchState | None = None,
    now: int | None = None,
    last: bool = False,
) -> Change:
    """Write a change of locked ``m`` (one UPDATE, one INSERT) and publish it after commit.

    ``before`` is the state the change started from: the pushed frames carry
    only the events after it. Must run inside the transaction holding the lock.
    ``last``: nothing else is written in this transaction after it (a player's
    action: :func:`_commit_along`).
    """
    m.state = None if state is None else engine.to_dict(state)
    m.version += 1
    m.wake_at_ms = next_wakeup(m, state)
    since = before.seq if before is not None else None
    change = Change(m, state, timing.now_ms() if now is None else now, since)
    change.marks = marks = stages.current()
    conn = _this_thread()
    rows = getattr(_batches, "rows", None)
    if rows is not None and not last:
        rows.append(_now_as_text(_row_params(m, conn)))
        _batches.events.extend(_now_as_text(r) for r in _event_rows([(m, events)], conn))
    else:
        _write_now(m, events, conn, change, last)

    # The views are built outside the row lock, on this thread (not on the event loop,
    # where the push goes): above, while the COMMIT is on its way, else now that it is
    # answered. Then the change is published.
    def committed() -> None:
        stages.mark("committed", marks)
        change.built()
        stages.mark("built", marks)
        publish(change)

    transaction.on_commit(committed)
    return change


def _write_now(
    m: Match, events: list[dict[str, Any]], conn: Any, change: Change, last: bool
) -> None:
    with _together(conn):
        _write_row(m, conn)
        record_events_of([(m, events)], conn)
        if last and _commit_along(conn):
            # The views are built while the COMMIT is on its way and the database makes
            # it durable (the row's lock is the database's to release, not ours): they
            # are published only once it is answered (on_commit, below). A view that
            # fails here fails there again, after the commit, as it always did: never
            # in the middle of the pipeline, with the COMMIT sent.
            with contextlib.suppress(Exception):
                change.built()


def publish(change: Change) -> None:
    """Hand a committed change to whoever pushes it (``matches.realtime.broadcast``)."""
    match_changed.send(sender=Match, change=change)


def record_events(m: Match, events: list[dict[str, Any]]) -> None:
    """Append ``events`` to the match's log (one INSERT for them all)."""
    record_events_of([(m, events)])


def record_events_of(logs: Sequence[tuple[Match, list[dict[str, Any]]]], conn: Any = None) -> None:
    """Append events to several matches' logs at once (one ``executemany``)."""
    conn = conn or _this_thread()
    rows = _event_rows(logs, conn)
    if not rows:
        return
    with conn.cursor() as cursor:
        cursor.executemany(_insert_sql(conn.vendor)[0], rows)


def _event_rows(logs: Sequence[tuple[Match, list[dict[str, Any]]]], conn: Any) -> list[list[Any]]:
    _sql, fields = _insert_sql(conn.vendor)
    rows = []
    for m, events in logs:
        for e in events:
            ev = MatchEvent(
                match_id=m.pk,
                kind=str(e.get("type", "")),
                data=e,
                at_ms=int(e.get("t", 0)),
                version=m.version,
            )
            rows.append([_prepared(f, getattr(ev, f.attname), conn) for f in fields])
    return rows


# How many versions behind a decision may be and still be applied when every change
# since only gave time back (:func:`only_time_since`).
TIME_ONLY_BEHIND = 8


def only_time_since(m: Match, version: int) -> bool:
    """Whether every change of locked ``m`` after ``version`` only gave time back (its
    events all ``credit``): the position a decision was chosen on is still the board's.

    Then a decision sent at ``version`` is applied, not refused as stale. Our own faults
    bump the version under a player's feet: after a web process died, the seat's way back
    is given back (a credit, a new version) while the move it chose meanwhile is on its
    way; the drill at 200 matches refused 13 such moves in one restart, each to be made
    again. A change that moved anything else (a tile, a bid, a timeout, a void, a
    resignation) leaves the version stale. One read, only on this path; a version
    further back than :data:`TIME_ONLY_BEHIND`, or ahead, is stale as always."""
    if not m.version - TIME_ONLY_BEHIND <= version < m.version:
        return False
    behind = set(range(version + 1, m.version + 1))
    seen: set[int] = set()
    for v, kind in MatchEvent.objects.filter(match_id=m.pk, version__in=behind).values_list(
        "version", "kind"
    ):
        if kind != "credit":
            return False
        seen.add(v)
    return seen == behind  # a version without events: what it changed is not known


def mark_unpushed(match_id: int) -> None:
    """A committed change could not be pushed: the sweeper pushes the match again."""
    Match.objects.filter(pk=match_id).update(needs_push=True)


def repush_pending(limit: int = 100) -> list[int]:
    """Push the current frames of every match whose push failed; returns those pushed."""
    done = []
    for pk, version in Match.objects.filter(needs_push=True).values_list("pk", "version")[:limit]:
        change = current_change(pk)
        if change is None:
            continue
        publish(change)
        # Compare-and-set: a failure of a newer push sets the flag again.
        Match.objects.filter(pk=pk, version=version).update(needs_push=False)
        done.append(pk)
    return done


def push_again(match_id: int) -> bool:
    """Push every audience ``match_id``'s frame as it stands, once the current transaction
    commits (at once outside one); whether the match exists.

    For a change whose process died between its commit and its push: the sockets
    elsewhere would wait on the version before it (see ``presence.credit_dead``).
    A socket that has this version already ignores it.
    """
    change = current_change(match_id)
    if change is None:
        return False
    built = change.built()
    transaction.on_commit(lambda: publish(built))
    return True


def current_view(match_id: int, user: Any, *, watch: bool = False) -> tuple[Match, dict[str, Any]]:
    """A seat holder's full view (the page, a reconnect); ``ServiceError`` otherwise.

    With ``watch``, anyone else gets the spectators' view (no hand at all, the
    settlement's hands only once a hand is over) instead of ``not_a_player``.
    """
    m = _match_row(int(match_id))
    if m is None:
        raise ServiceError("not_found", _("No such match."))
    if not m.seats_of(getattr(user, "pk", None)) and not watch:
        raise ServiceError("not_a_player", _("You are not playing in this match."))
    state = engine.from_dict(m.state) if m.state is not None else None
    return m, view_for(m, state, audience_of(m, getattr(user, "pk", None)), timing.now_ms())


def current_change(match_id: int) -> Change | None:
    """Every audience's full frame as the match stands (a push retried after a failure)."""
    m = _match_row(int(match_id))
    if m is None:
        return None
    state = engine.from_dict(m.state) if m.state is not None else None
    return Change(m, state, timing.now_ms(), None)
