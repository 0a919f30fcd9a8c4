"""A socket's handshake reads (its session, its user, its match's seats, its first view)
with statements the ORM compiled once: the same rows and models as the ORM's own
reads, the same answers for a session that is gone, expired, tampered with or whose
user may not log in; nothing compiled again after the first read on a connection."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.db.models.sql.compiler import SQLCompiler
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from matches.lobby.invites import accept_invite, create_invite
from matches.models import Match
from matches.play import store
from matches.play.compiled import OneRow
from matches.play.errors import ServiceError
from matches.realtime.match_consumer import _open
from matches.realtime.socket_auth import user_for_session

pytestmark = pytest.mark.django_db


def _session_key(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return str(client.cookies[django_settings.SESSION_COOKIE_NAME].value)


def _scope(key: str) -> dict[str, Any]:
    return {"headers": [(b"cookie", f"{django_settings.SESSION_COOKIE_NAME}={key}".encode())]}


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SELECT the ORM compiles from now on, by model table."""
    seen: list[str] = []
    real = SQLCompiler.as_sql

    def as_sql(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(self.query.model._meta.db_table if self.query.model else "?")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SQLCompiler, "as_sql", as_sql)
    return seen


def test_the_first_view_is_the_orms_match_with_its_players_read_in_one_query(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = accept_invite(create_invite(alice).code, bob)
    orm = store.match_query().get(pk=m.pk)
    store.current_view(m.pk, alice)  # the statement compiled on this connection
    compiled = _compiles(monkeypatch)
    with CaptureQueriesContext(connection) as queries:
        got, view = store.current_view(m.pk, alice)
        names = (got.player0.username, got.player1.username)  # no query: read with it
    assert len(queries) == 1 and compiled == []
    assert names == ("alice", "bob")
    for field in Match._meta.concrete_fields:
        assert getattr(got, field.attname) == getattr(orm, field.attname), field.name
    assert got._state.adding is False and got._state.db == "default"
    assert view["match"]["id"] == m.pk


def test_a_match_that_is_not_there_is_not_found_whatever_its_number(alice: Any) -> None:
    for missing in (987_654_321, 2**63, 2**70, -(2**64)):
        with pytest.raises(ServiceError) as refused:
            store.current_view(missing, alice)
        assert refused.value.code == "not_found"
        assert store.current_change(missing) is None
        assert Match.objects.filter(pk=missing).first() is None  # as the ORM says


def test_a_value_of_the_wrong_type_is_refused_before_the_database() -> None:
    read = OneRow(lambda pk: Match.objects.filter(pk=pk), int)
    with CaptureQueriesContext(connection) as queries, pytest.raises(TypeError):
        read("1; DROP TABLE matches_match")
    assert len(queries) == 0


def test_a_query_that_does_not_take_its_value_once_is_refused() -> None:
    read = OneRow(lambda pk: Match.objects.filter(pk=pk) | Match.objects.filter(version=pk), int)
    with pytest.raises(ValueError, match="not once"):
        read(1)


def test_values_the_orm_compiles_differently_are_read_by_the_orm(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A version past the column's 32 bits: the ORM drops that lookup (no row has it),
    # so the first statement is not the stand-ins' — that call goes to the ORM, and
    # the next one, in range, is compiled and kept.
    m = accept_invite(create_invite(alice).code, bob)
    read = OneRow(lambda pk, v: Match.objects.filter(pk=pk, version__lt=v), int, int)
    assert read(m.pk, 2**40) == Match.objects.filter(pk=m.pk, version__lt=2**40).first()
    assert read(m.pk, m.version + 1) == m
    compiled = _compiles(monkeypatch)
    assert read(m.pk, m.version) is None and compiled == []
    # Out of the column's range once compiled: the ORM's answer again (every version
    # is below 2**40), not the database's refusal of the number.
    assert read(m.pk, 2**40) == m


def test_a_session_gives_its_user_in_two_reads_compiled_once(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _session_key(alice)
    assert user_for_session(key) == alice
    compiled = _compiles(monkeypatch)
    with CaptureQueriesContext(connection) as queries:
        user = user_for_session(key)
    assert user == alice and len(queries) == 2 and compiled == []
    # The model the ORM would make: what the socket watches for a password change
    # (post_init) is there.
    assert user is not None and user._sb_auth_was == (alice.password, True)


def test_a_session_that_expired_was_deleted_or_tampered_with_gives_no_user(alice: Any) -> None:
    key = _session_key(alice)
    rows = Session.objects.filter(session_key=key)
    rows.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert user_for_session(key) is None
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() + timedelta(days=1))
    assert user_for_session(key) == alice
    row = Session.objects.get(session_key=key)
    Session.objects.filter(session_key=key).update(session_data=row.session_data[:-3] + "AAA")
    assert user_for_session(key) is None
    Session.objects.filter(session_key=key).delete()
    assert user_for_session(key) is None
    for junk in ("", "short", "x" * 40, "\x00" * 32):
        assert user_for_session(junk) is None


def test_a_user_who_may_not_log_in_or_changed_password_gets_no_socket(alice: Any) -> None:
    key = _session_key(alice)
    alice.is_active = False
    alice.save()
    assert user_for_session(key) is None
    alice.is_active = True
    alice.set_password("another passphrase altogether 7")
    alice.save()
    assert user_for_session(key) is None  # the session's hash is the old password's


def test_a_handshake_finds_its_audience_from_the_match_seats(
    alice: Any, bob: Any, carol: Any
) -> None:
    m = accept_invite(create_invite(alice).code, bob)
    assert _open(_scope(_session_key(alice)), m.pk) == (alice, "seat0")
    assert _open(_scope(_session_key(bob)), m.pk) == (bob, "seat1")
    assert _open(_scope(_session_key(carol)), m.pk) == (carol, "watch")
    assert _open(_scope(_session_key(carol)), 2**64) == (carol, None)
    assert _open(_scope("no-such-session-key-at-all"), m.pk) is None
