"""Probe "the computer's seat": `computer-3` cannot be signed up, and the computer is itself.

The computer players' accounts come from a data migration and are found by
their level, so even a person who held the name ``computer-3`` before names
were reserved never sits in the computer's seat.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.reserved import is_reserved
from tests.abuse.helpers import sign_up
from tests.support import PASSWORD, make_user

RESERVED_JA = "は予約されています"
MIXED_JA = "別の文字に見える"


def users() -> list[tuple[str, bool, Any]]:
    return sorted(get_user_model().objects.values_list("username", "is_bot", "computer_level"))


def test_the_migration_made_the_three_computer_accounts(db: Any) -> None:
    computers = get_user_model().objects.filter(computer_level__isnull=False).order_by("pk")
    assert [(u.username, u.computer_level, u.is_bot) for u in computers] == [
        ("computer-1", 1, True),
        ("computer-2", 2, True),
        ("computer-3", 3, True),
    ]
    assert not any(u.has_usable_password() for u in computers)
    # Nobody logs in as the computer, whatever password is tried.
    client = Client()
    for guess in ("", "computer", PASSWORD, "!"):
        r = client.post("/accounts/login/", {"username": "computer-3", "password": guess})
        assert r.status_code == 200 and "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    "name",
    [
        "computer-3",
        "Computer-3",
        "ＣＯＭＰＵＴＥＲ－３",  # full width
        "computer-9",
        "computer_bot",
        "admin",
        "Admin2",
        "siteadmin",
        "staff",
        "system",
        "bot",
        "bot_01",
        "moderator",
        "support",
        "official",
        "SpectacularBid",
        "管理者",
        "運営",
        "運営スタッフ",
        "公式",
        "コンピューター",
        "ｺﾝﾋﾟｭｰﾀｰ",  # half-width katakana
        "こんぴゅーたー",  # in hiragana
        "ボット",
        "システム",
    ],
)
def test_a_reserved_name_is_refused_and_nothing_is_created(db: Any, name: str) -> None:
    before = users()
    client = Client()
    response = sign_up(client, name)
    assert response.status_code == 200
    assert RESERVED_JA in response.content.decode()
    assert users() == before
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    "name",
    ["аdmin", "pаypal", "tarоu", "Ωmega"],  # a Cyrillic а / о, a Greek Ω among Latin letters
)
def test_a_mixed_script_look_alike_is_refused_with_a_clear_message(db: Any, name: str) -> None:
    before = users()
    client = Client()
    response = sign_up(client, name)
    page = response.content.decode()
    assert response.status_code == 200
    assert MIXED_JA in page and ("キリル文字" in page or "ギリシャ文字" in page)
    assert users() == before


def test_the_message_is_in_english_for_english_readers(db: Any) -> None:
    response = sign_up(Client(), "аdmin", HTTP_ACCEPT_LANGUAGE="en")
    assert "cannot mix these alphabets (Cyrillic, Latin)" in response.content.decode()
    response = sign_up(Client(), "admin", HTTP_ACCEPT_LANGUAGE="en")
    assert "“admin” is reserved" in response.content.decode()


@pytest.mark.parametrize(
    "name",
    [
        "山田たろう",  # Han + hiragana
        "タロウ3",  # katakana + a digit
        "山田taro",  # Han + Latin
        "東京タワー_2",  # Han + katakana + symbol + digit
        "Ωμέγα",  # one script (Greek)
        "Иван",  # one script (Cyrillic)
        "badminton",  # "admin" inside, not at an end
        "staffordshire",
        "robotnik",
        "taro-bot",  # a person's own bot account may say so
    ],
)
def test_ordinary_names_of_every_kind_still_sign_up(db: Any, name: str) -> None:
    client = Client()
    response = sign_up(client, name)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert get_user_model().objects.filter(username=name, is_bot=False).exists()
    assert not is_reserved(name)


def _state(client: Client, match_id: int) -> Any:
    r = client.get(f"/api/matches/{match_id}/state/")
    assert r.status_code == 200
    return r.json()["view"]


@pytest.mark.django_db(transaction=True)
def test_a_squatted_computer_name_never_takes_the_computers_seat(settings: Any) -> None:
    """A person who took ``computer-3`` before names were reserved stays a person."""
    settings.COMPUTER_IN_PROCESS = True
    settings.MATCH_SWEEPER = "web"
    settings.REDIS_URL = ""
    User = get_user_model()
    # The database as it was: no computer account yet, a person called computer-3.
    User.objects.filter(computer_level__isnull=False).delete()
    squatter = make_user("computer-3", PASSWORD)
    from importlib import import_module

    migration = import_module("accounts.migrations.0005_computer_accounts")
    migration.make_accounts(django_apps, None)
    real = User.objects.get(computer_level=3)
    assert real.pk != squatter.pk and real.is_bot and not real.has_usable_password()
    squatter.refresh_from_db()
    assert squatter.computer_level is None and not squatter.is_bot

    # Nobody can take the name now, in any spelling.
    before = users()
    refused = sign_up(Client(), "COMPUTER-3")
    assert refused.status_code == 200 and RESERVED_JA in refused.content.decode()
    assert users() == before

    # A player picks 上級: the computer's seat is the real computer account, with its badge.
    player = Client()
    assert sign_up(player, "hanako").status_code == 302
    r = player.post("/api/matches/computer/", {"level": 3}, content_type="application/json")
    assert r.status_code == 200
    match_id = r.json()["match_id"]
    match = _state(player, match_id)["match"]
    computer_seat = match["bots"].index(True)
    assert match["bots"] == [computer_seat == 0, computer_seat == 1]
    assert match["names"][computer_seat] == real.username
    page = player.get(f"/matches/{match_id}/").content.decode()
    assert 'data-testid="computer-badge"' in page and "🤖 上級" in page
    from matches.models import Match

    m = Match.objects.get(pk=match_id)
    assert (m.computer_seat, m.computer_level) == (computer_seat, 3)
    assert squatter.pk not in (m.player0_id, m.player1_id)
