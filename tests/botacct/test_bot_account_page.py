"""The profile page's bot-account card: becoming a bot, and the token shown once.

A user turns a fresh account into a bot account on its own profile, then makes,
rotates and revokes its API token there. Only the token's SHA-256 is stored.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from accounts import bot_accounts
from accounts.models import BotToken
from matches.lobby import matchmaking as queue
from matches.lobby.invites import accept_invite, create_invite
from tests.botacct.conftest import bearer


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def shown_token(page: str) -> str:
    """The token in the page's one-time token field."""
    m = re.search(r'data-testid="bot-token"[^>]*>(sbb_[A-Za-z0-9_-]{43})</textarea>', page)
    assert m, "the page shows no token"
    return m.group(1)


def make_token(c: Client, op: str = "create") -> str:
    response = c.post("/accounts/bot/token/", {"op": op})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]  # never kept by a cache
    return shown_token(response.content.decode())


def api_status(token: str) -> int:
    return Client().get("/api/matches/live/", **bearer(token)).status_code


# --- becoming a bot ------------------------------------------------------------------


def test_a_fresh_account_becomes_a_bot_account_once_confirmed(alice: Any) -> None:
    c = logged_in(alice)
    page = c.get("/u/alice/").content.decode()
    assert 'data-testid="become-bot"' in page and 'data-testid="bot-badge"' not in page

    unconfirmed = c.post("/accounts/bot/", follow=True)
    alice.refresh_from_db()
    assert not alice.is_bot
    assert "先に確認してください" in unconfirmed.content.decode()

    done = c.post("/accounts/bot/", {"confirm": "yes"}, follow=True).content.decode()
    alice.refresh_from_db()
    assert alice.is_bot
    assert 'data-testid="bot-badge"' in done  # next to its name on its profile
    assert 'data-testid="bot-token-create"' in done and 'data-testid="become-bot"' not in done


def test_an_account_that_has_played_cannot_become_a_bot(alice: Any, bob: Any) -> None:
    accept_invite(create_invite(alice).code, bob)
    c = logged_in(alice)
    page = c.get("/u/alice/").content.decode()
    assert 'data-testid="bot-not-fresh"' in page and 'data-testid="become-bot"' not in page

    refused = c.post("/accounts/bot/", {"confirm": "yes"}, follow=True).content.decode()
    alice.refresh_from_db()
    assert not alice.is_bot
    assert "新しいアカウント" in refused  # only a fresh account can
    with pytest.raises(bot_accounts.BotAccountError) as e:
        bot_accounts.become_bot(bob)
    assert e.value.code == "not_fresh"


def test_an_account_waiting_in_the_ranked_queue_cannot_become_a_bot(alice: Any) -> None:
    queue.join(alice, pair=False)
    logged_in(alice).post("/accounts/bot/", {"confirm": "yes"})
    alice.refresh_from_db()
    assert not alice.is_bot


def test_nobody_can_make_another_account_a_bot(alice: Any, bob: Any) -> None:
    assert Client().post("/accounts/bot/", {"confirm": "yes"}).status_code == 302  # to log in
    logged_in(bob).post("/accounts/bot/", {"confirm": "yes", "user": alice.pk})
    alice.refresh_from_db()
    assert not alice.is_bot  # only the logged-in account itself changes
    page = logged_in(bob).get("/u/alice/").content.decode()
    assert 'data-testid="bot-account"' not in page  # the card is the owner's alone


def test_a_person_has_no_token(alice: Any) -> None:
    response = logged_in(alice).post("/accounts/bot/token/", {"op": "create"}, follow=True)
    assert 'data-testid="bot-token"' not in response.content.decode()
    assert not BotToken.objects.filter(user=alice).exists()


# --- the token -----------------------------------------------------------------------


@pytest.fixture
def bot(alice: Any) -> Any:
    return bot_accounts.become_bot(alice)


def test_a_token_is_shown_once_and_only_its_hash_is_stored(bot: Any) -> None:
    c = logged_in(bot)
    token = make_token(c)
    assert api_status(token) == 200

    row = BotToken.objects.get(user=bot)
    assert row.digest == hashlib.sha256(token.encode()).hexdigest()
    # Nowhere in the database, in any column of any table (sessions included).
    assert rows_holding(token) == []
    assert rows_holding(token[4:20]) == []

    again = c.get("/u/alice/").content.decode()
    assert token not in again and 'data-testid="bot-token"' not in again
    assert 'data-testid="bot-token-rotate"' in again and 'data-testid="bot-token-revoke"' in again


def rows_holding(text: str) -> list[tuple[str, str]]:
    """(table, column) of every stored value in which ``text`` occurs."""
    found = []
    with connection.cursor() as cur:
        for table in connection.introspection.table_names(cur):
            for col in connection.introspection.get_table_description(cur, table):
                qn = connection.ops.quote_name
                cur.execute(
                    f"SELECT 1 FROM {qn(table)} WHERE CAST({qn(col.name)} AS TEXT) LIKE %s LIMIT 1",
                    [f"%{text}%"],
                )
                if cur.fetchone():
                    found.append((table, col.name))
    return found


def test_rotating_shows_a_new_token_and_kills_the_old_one_at_once(bot: Any) -> None:
    c = logged_in(bot)
    old = make_token(c)
    new = make_token(c, "rotate")
    assert new != old
    assert api_status(old) == 401
    assert api_status(new) == 200
    assert BotToken.objects.filter(user=bot).count() == 1


def test_revoking_kills_the_token(bot: Any) -> None:
    c = logged_in(bot)
    token = make_token(c)
    page = c.post("/accounts/bot/token/", {"op": "revoke"}, follow=True).content.decode()
    assert api_status(token) == 401
    assert not BotToken.objects.filter(user=bot).exists()
    assert 'data-testid="bot-token-create"' in page  # a new one can be made


def test_a_token_cannot_manage_tokens(bot: Any) -> None:
    """Managing the token needs the account's session: the token itself is no key to it."""
    token = make_token(logged_in(bot))
    response = Client().post("/accounts/bot/token/", {"op": "rotate"}, **bearer(token))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert api_status(token) == 200  # still the same token


def test_token_making_is_limited_per_account(bot: Any, bob: Any, settings: Any) -> None:
    settings.BOT_TOKEN_ISSUE_RATE = "2/h"
    c = logged_in(bot)
    make_token(c)
    second = make_token(c, "rotate")
    limited = c.post("/accounts/bot/token/", {"op": "rotate"})
    assert limited.status_code == 429
    assert "sbb_" not in limited.content.decode()
    assert api_status(second) == 200  # the refused rotation changed nothing
    other = bot_accounts.become_bot(bob)
    assert make_token(logged_in(other))  # another account has its own count


def test_the_card_reads_in_english_too(bot: Any) -> None:
    c = logged_in(bot)
    c.cookies["django_language"] = "en"
    page = c.post("/accounts/bot/token/", {"op": "create"}).content.decode()
    assert "Copy it now: it is not shown again." in page
