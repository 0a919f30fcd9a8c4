"""Japanese by default, English after the header's language switch."""

from __future__ import annotations

from typing import Any

from django.test import Client


def switch_to(client: Client, language: str, next_url: str) -> Any:
    return client.post("/i18n/setlang/", {"language": language, "next": next_url})


def test_pages_are_in_japanese_by_default(client: Client, db: Any) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert '<html lang="ja">' in page
    assert "スペクタキュラー・ビッド" in page
    assert "ログイン" in page
    assert "新規登録" in page
    assert "ロビー" in page


def test_the_profile_is_in_japanese_by_default(client: Client, alice: Any) -> None:
    page = client.get("/u/alice/").content.decode()
    assert "対局数" in page
    assert "勝ち" in page
    assert "負け" in page


def test_the_language_switch_turns_the_site_english(client: Client, db: Any) -> None:
    response = switch_to(client, "en", "/accounts/login/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"

    page = client.get("/accounts/login/").content.decode()
    assert '<html lang="en">' in page
    assert "Spectacular Bid" in page
    assert "Log in" in page
    assert "Sign up" in page
    assert "Lobby" in page
    assert "ログイン" not in page


def test_it_switches_back_to_japanese(client: Client, db: Any) -> None:
    switch_to(client, "en", "/")
    switch_to(client, "ja", "/")
    assert "ログイン" in client.get("/accounts/login/").content.decode()


def test_the_switch_names_each_language_in_itself(client: Client, db: Any) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert ">日本語</button>" in page
    assert ">English</button>" in page
