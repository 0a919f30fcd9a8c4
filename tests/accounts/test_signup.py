from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client

from tests.support import PASSWORD


def sign_up(client: Client, username: str, password: str = PASSWORD, **extra: str) -> Any:
    data = {"username": username, "password1": password, "password2": password, **extra}
    return client.post("/signup/", data)


def test_it_signs_up_logs_in_and_the_profile_shows_no_matches(client: Client, db: Any) -> None:
    response = sign_up(client, "dora")
    assert response.status_code == 302
    assert response["Location"] == "/"

    user = get_user_model().objects.get(username="dora")
    assert int(client.session["_auth_user_id"]) == user.pk

    page = client.get("/u/dora/").content.decode()
    assert 'data-stat="played">0<' in page
    assert 'data-stat="won">0<' in page
    assert 'data-stat="lost">0<' in page


def test_it_returns_to_next_after_sign_up(client: Client, db: Any) -> None:
    response = sign_up(client, "dora", next="/u/dora/")
    assert response["Location"] == "/u/dora/"


def test_it_ignores_a_next_that_leaves_the_site(client: Client, db: Any) -> None:
    response = sign_up(client, "dora", next="https://evil.example/")
    assert response["Location"] == "/"


def test_it_rejects_a_taken_username(client: Client, alice: Any) -> None:
    response = sign_up(client, "alice")
    assert response.status_code == 200
    assert get_user_model().objects.filter(username="alice").count() == 1
    assert "_auth_user_id" not in client.session


def test_it_rejects_mismatched_passwords(client: Client, db: Any) -> None:
    data = {"username": "dora", "password1": PASSWORD, "password2": PASSWORD + "!"}
    response = client.post("/signup/", data)
    assert response.status_code == 200
    assert not get_user_model().objects.filter(username="dora").exists()


def test_it_rejects_a_weak_password(client: Client, db: Any) -> None:
    response = sign_up(client, "dora", password="12345678")
    assert response.status_code == 200
    assert not get_user_model().objects.filter(username="dora").exists()


def test_a_logged_in_user_is_sent_on_from_the_sign_up_page(client: Client, alice: Any) -> None:
    client.force_login(alice)
    assert client.get("/signup/")["Location"] == "/"
