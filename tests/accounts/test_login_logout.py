from __future__ import annotations

from typing import Any

from django.test import Client

from tests.support import PASSWORD


def test_it_logs_in_with_the_right_password(client: Client, alice: Any) -> None:
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert int(client.session["_auth_user_id"]) == alice.pk


def test_it_refuses_the_wrong_password(client: Client, alice: Any) -> None:
    response = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session


def test_it_returns_to_next_after_log_in(client: Client, alice: Any) -> None:
    response = client.post(
        "/accounts/login/?next=/u/alice/",
        {"username": "alice", "password": PASSWORD, "next": "/u/alice/"},
    )
    assert response["Location"] == "/u/alice/"


def test_it_logs_out_on_post(client: Client, alice: Any) -> None:
    client.force_login(alice)
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_the_header_shows_the_user_and_a_log_out_button(client: Client, alice: Any) -> None:
    client.force_login(alice)
    page = client.get("/u/alice/").content.decode()
    assert 'href="/u/alice/"' in page
    assert 'action="/accounts/logout/"' in page


def test_the_header_offers_log_in_and_sign_up_to_visitors(client: Client, db: Any) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert 'href="/signup/"' in page
    assert 'action="/accounts/logout/"' not in page
