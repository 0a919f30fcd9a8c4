"""One-row reads compiled by the ORM once, then run with a plain cursor.

Django builds a query's SQL anew on every call: for a row read by its key that is
most of the read's cost. A socket's handshake reads its session, its user, its
match's seats and its first view; in a reconnect wave (1,000 sockets after a proxy
restart at 500 matches) those reads, compiled each time, were a fifth of the web
processes' CPU, and the wave's pace is what the cores have left.

:class:`OneRow` takes the queryset as a function of its values. The first call on
a connection compiles it with stand-in values (:data:`STAND_INS`), finds where each
stands in the statement's parameters, and keeps the statement, the columns'
converters and the way the ORM makes the model (and its ``select_related`` rows)
from a row — once the ORM's statement for that call's own values proved to be the
same with them in those places (else that call is the ORM's, and nothing is kept).
Every later call only puts its values there: the rows and models are the ORM's own
(``Model.from_db``; ``post_init`` is sent as always).

A value must be an int or a str, which every database takes as it is (the ORM's
preparation of a lookup's value is not run again); an int past 64 bits finds no
row, as the ORM's lookup finds none.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators

# Values no real query asks for, by the type of the value they stand for (the types
# every database takes unchanged: a datetime, say, SQLite's backend turns into text).
STAND_INS: dict[type, tuple[Any, ...]] = {
    # Small enough for any integer column (a value out of a column's range is a
    # lookup the ORM compiles away), and a literal of the query that equals one is
    # found twice: refused, never mistaken.
    int: (31_337, 31_338, 31_339),
    str: ("\x01sb-stand-in-1\x01", "\x01sb-stand-in-2\x01", "\x01sb-stand-in-3\x01"),
}


_INT64 = (-(2**63), 2**63 - 1)
# psycopg's wrappers of an integer parameter, by the bits of the column.
_BITS = {"Int2": 16, "Int4": 32, "Int8": 64, "int": 64}


class _Plan:
    __slots__ = ("sql", "params", "slots", "compiler", "converters", "model", "span", "names",
                 "populators", "kinds")  # fmt: skip

    def __init__(self, qs: QuerySet[Any], conn: Any, stand_ins: list[Any]) -> None:
        compiler = qs.query.get_compiler(connection=conn)
        sql, params = compiler.as_sql()
        self.sql, self.params = sql, list(params)
        self.slots = []
        for s in stand_ins:
            # PostgreSQL's backend wraps an integer column's value (psycopg's Int4…).
            at = [i for i, p in enumerate(self.params) if isinstance(p, type(s)) and p == s]
            if len(at) != 1:
                raise ValueError(f"the query takes {s!r} {len(at)} times, not once: {sql}")
            self.slots.append(at[0])
        select, klass_info = compiler.select, compiler.klass_info
        self.compiler = compiler
        self.converters = compiler.get_converters([s[0] for s in select[0 : compiler.col_count]])
        self.model = klass_info["model"]
        fields = klass_info["select_fields"]
        self.span = slice(fields[0], fields[-1] + 1)
        self.names = [f[0].target.attname for f in select[self.span]]
        self.populators = get_related_populators(klass_info, select, conn.alias)
        self.kinds = [type(self.params[slot]) for slot in self.slots]

    def with_values(self, values: tuple[Any, ...]) -> list[Any] | None:
        """The parameters with ``values`` in their places, each wrapped as the ORM wraps
        it; ``None`` when one is out of its column's range (the ORM's lookup would
        compile differently)."""
        params = list(self.params)
        for slot, kind, value in zip(self.slots, self.kinds, values, strict=True):
            bits = _BITS.get(kind.__name__)
            if bits is not None and not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
                return None
            params[slot] = value if kind is type(value) else kind(value)
        return params


class OneRow:
    """``build(*values)`` → a queryset of at most one row, read as a model (or ``None``).

    ``OneRow(lambda pk: Match.objects.filter(pk=pk), int)(7)`` is
    ``Match.objects.filter(pk=7).first()`` without ``first``'s ordering, compiled once.
    """

    def __init__(self, build: Callable[..., QuerySet[Any]], *types: type) -> None:
        self._build = build
        self._types = types
        self._plans: weakref.WeakKeyDictionary[Any, _Plan] = weakref.WeakKeyDictionary()

    def _plan(self, conn: Any, values: tuple[Any, ...]) -> _Plan | None:
        """The connection's plan; ``None`` when the ORM's statement for ``values`` is
        not the plan's with ``values`` in it (then the ORM reads: nothing is kept)."""
        plan = self._plans.get(conn)
        if plan is None:
            used: dict[type, int] = {}
            stand_ins = []
            for t in self._types:
                stand_ins.append(STAND_INS[t][used.get(t, 0)])
                used[t] = used.get(t, 0) + 1
            plan = _Plan(self._build(*stand_ins).using(conn.alias), conn, stand_ins)
            compiler = self._build(*values).using(conn.alias).query.get_compiler(connection=conn)
            sql, params = compiler.as_sql()
            if sql != plan.sql or list(params) != plan.with_values(values):
                return None
            self._plans[conn] = plan
        return plan

    def __call__(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> Model | None:
        if len(values) != len(self._types):
            raise TypeError(f"{len(self._types)} values, not {len(values)}")
        for t, value in zip(self._types, values, strict=True):
            if not isinstance(value, t) or isinstance(value, bool):
                raise TypeError(f"{value!r} is not a {t.__name__}")
            if t is int and not _INT64[0] <= value <= _INT64[1]:
                return None  # no column of ours holds it (the ORM finds nothing too)
        conn = connections[using]  # this thread's own
        plan = self._plan(conn, values)
        params = None if plan is None else plan.with_values(values)
        if plan is None or params is None:
            return next(iter(self._build(*values).using(using)), None)
        with conn.cursor() as cursor:
            cursor.execute(plan.sql, params)
            row = cursor.fetchone()
        if row is None:
            return None
        if plan.converters:
            row = next(iter(plan.compiler.apply_converters([row], plan.converters)))
        obj = plan.model.from_db(conn.alias, plan.names, row[plan.span])
        for populator in plan.populators:
            populator.populate(row, obj)
        return obj
