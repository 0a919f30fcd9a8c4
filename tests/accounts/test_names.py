"""Names people see at the table: usernames at sign-up and the same-device guest's name.

One set of rules (accounts/names.py): letters of any script are welcome; control,
invisible and unassigned characters are refused, each fault with its own message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import translation

from accounts.names import GUEST_NAME_MAX, clean_guest_name, validate_username
from matches.models import Match
from tests.support import PASSWORD

# Japanese fragments of each fault's message (the default language).
SPACE = "ユーザー名に空白は使えません"
SYMBOL = "ユーザー名に「"
CONTROL = "制御文字"
INVISIBLE = "見えない書式文字"
UNASSIGNED = "未割り当て"
LEADING_MARK = "結合文字"
STACKED = "重ねすぎ"
EMPTY = "二人目のプレイヤーの名前を入力してください"
TOO_LONG = "名前が長すぎます"

BAD_FOR_EVERY_NAME = [
    ("\u200b", "invisible", INVISIBLE),  # only a zero-width space
    ("ab\u202ecd", "invisible", INVISIBLE),  # right-to-left override
    ("太\u200d郎", "invisible", INVISIBLE),  # zero-width joiner
    ("\u2066taro\u2069", "invisible", INVISIBLE),  # bidi isolates
    ("ta\u00adro", "invisible", INVISIBLE),  # soft hyphen
    ("ta\x00ro", "control", CONTROL),
    ("ta\x1bro", "control", CONTROL),  # escape
    ("ta\u2028ro", "control", CONTROL),  # line separator
    ("ta\ud800ro", "unassigned", UNASSIGNED),  # lone surrogate
    ("ta\ue000ro", "unassigned", UNASSIGNED),  # private use
    ("ta\U000e0001ro", "invisible", INVISIBLE),  # language tag
    ("\u0301taro", "leading_mark", LEADING_MARK),
    ("tx" + "\u0301" * 5 + "ro", "stacked_marks", STACKED),  # x has no precomposed form
]


def refusal(check: Any, value: str) -> ValidationError:
    with translation.override("ja"), pytest.raises(ValidationError) as caught:
        check(value)
    return caught.value


@pytest.mark.parametrize(("name", "code", "message"), BAD_FOR_EVERY_NAME)
@pytest.mark.parametrize("check", [validate_username, clean_guest_name], ids=["user", "guest"])
def test_what_no_name_may_hold(check: Any, name: str, code: str, message: str) -> None:
    error = refusal(check, name)
    assert error.code == code
    with translation.override("ja"):
        assert message in error.messages[0]


def test_the_message_names_the_invisible_character() -> None:
    with translation.override("ja"):
        assert "U+202E" in refusal(clean_guest_name, "ab\u202ecd").messages[0]


@pytest.mark.parametrize(
    "name", ["太郎", "たろう", "タロウ", "taro", "Ωμέγα", "Zoë", "हिन्दी", "taro_2", "a.b@c+d-e"]
)
def test_usernames_of_any_script(name: str) -> None:
    validate_username(name)  # no error


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("たろう 2", "space", SPACE),
        ("taro\u3000jiro", "space", SPACE),  # ideographic space
        ("taro\u00a0jiro", "space", SPACE),  # no-break space
        ("taro!", "symbol", SYMBOL),
        ("太郎😀", "symbol", SYMBOL),
    ],
)
def test_username_faults_have_their_own_messages(name: str, code: str, message: str) -> None:
    error = refusal(validate_username, name)
    assert error.code == code
    with translation.override("ja"):
        assert message in error.messages[0]
        assert "半角" not in error.messages[0]


def test_the_symbol_message_lists_each_refused_character_once() -> None:
    with translation.override("ja"):
        assert "「!#」" in refusal(validate_username, "a!b#c!").messages[0]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("太郎", "太郎"),
        ("  たろう  2 ", "たろう 2"),  # trimmed, inner spaces folded to one
        ("\u3000山田\u3000太郎\u3000", "山田 太郎"),
        ("ＴＡＲＯ", "TARO"),  # full-width letters folded
        ("Zoë 🎲", "Zoë 🎲"),
        ("x" * GUEST_NAME_MAX, "x" * GUEST_NAME_MAX),
    ],
)
def test_guest_names_are_trimmed_and_folded(raw: str, shown: str) -> None:
    assert clean_guest_name(raw) == shown


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        ("", "empty", EMPTY),
        ("  \u3000 ", "empty", EMPTY),
        ("x" * (GUEST_NAME_MAX + 1), "too_long", TOO_LONG),
        ("太郎\n", "control", CONTROL),  # a line break is refused, not trimmed away
        ("\t太郎", "control", CONTROL),
    ],
)
def test_guest_name_faults(raw: str, code: str, message: str) -> None:
    error = refusal(clean_guest_name, raw)
    assert error.code == code
    with translation.override("ja"):
        assert message in error.messages[0]


# --- Sign-up -------------------------------------------------------------------------------


def sign_up(client: Client, username: str) -> Any:
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post("/signup/", data)


def test_a_japanese_username_signs_up(client: Client, db: Any) -> None:
    response = sign_up(client, "太郎")
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="太郎").exists()


def test_full_width_letters_sign_up_as_half_width(client: Client, db: Any) -> None:
    assert sign_up(client, "ＴＡＲＯ").status_code == 302
    assert get_user_model().objects.filter(username="TARO").exists()


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("たろう 2", SPACE),
        ("\u200b", INVISIBLE),
        ("ta\u202ero", INVISIBLE),
        ("taro!", SYMBOL),
    ],
)
def test_sign_up_refuses_with_the_precise_message(
    client: Client, db: Any, username: str, message: str
) -> None:
    response = sign_up(client, username)
    assert response.status_code == 200
    assert message in response.content.decode()
    # Nobody but the site's computer players (made by a migration).
    assert not get_user_model().objects.filter(computer_level__isnull=True).exists()
    assert "_auth_user_id" not in client.session


def test_the_sign_up_help_says_what_a_username_may_hold(client: Client, db: Any) -> None:
    page = client.get("/signup/").content.decode()
    assert "漢字" in page and "空白は使えません" in page and ". _ @ + -" in page
    assert "半角アルファベット" not in page  # Django's help, which 太郎 contradicted
    english = client.get("/signup/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Letters of any script" in english and "no spaces" in english


def test_a_new_name_is_thirty_characters_at_most(client: Client, db: Any) -> None:
    """A name fills the table's seat, the lists and the header: sign-up keeps it short.
    Older names and the admin's keep the field's 150 (the pages cut or break them:
    tests/ui/test_ui_long_names.py)."""
    page = client.get("/signup/").content.decode()
    assert 'maxlength="30"' in page and "30文字まで" in page
    english = client.get("/signup/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Up to 30 characters" in english

    refused = sign_up(client, "た" * 31)
    assert refused.status_code == 200
    assert "名前が長すぎます（30文字まで）。" in refused.content.decode()
    assert not get_user_model().objects.filter(username="た" * 31).exists()
    assert "_auth_user_id" not in client.session

    assert sign_up(client, "た" * 30).status_code == 302
    assert get_user_model().objects.filter(username="た" * 30).exists()


# --- Guest names through the same-device endpoints ----------------------------------------


@pytest.fixture
def player(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


def api_same_device(client: Client, guest_name: Any) -> Any:
    return client.post(
        "/api/matches/same-device/",
        json.dumps({"guest_name": guest_name}),
        content_type="application/json",
    )


@pytest.mark.parametrize(
    ("guest_name", "message"),
    [
        ("\u200b", INVISIBLE),
        ("ab\u202ecd", INVISIBLE),
        ("ta\nro", CONTROL),
        ("   ", EMPTY),
        ("x" * (GUEST_NAME_MAX + 1), TOO_LONG),
    ],
)
def test_the_api_refuses_a_bad_guest_name(player: Client, guest_name: str, message: str) -> None:
    response = api_same_device(player, guest_name)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "bad_request"
    assert message in body["message"]
    assert not Match.objects.exists()


def test_the_api_keeps_the_cleaned_guest_name(player: Client) -> None:
    response = api_same_device(player, "  山田\u3000\u3000太郎 ")
    assert response.status_code == 200
    match = Match.objects.get(pk=response.json()["match_id"])
    assert match.guest_name == "山田 太郎"


def test_the_lobby_form_refuses_a_bad_guest_name(player: Client) -> None:
    response = player.post("/matches/same-device/", {"guest_name": "\u200b"}, follow=True)
    assert INVISIBLE in response.content.decode()
    assert not Match.objects.exists()
