from __future__ import annotations

from typing import Any

from django.test import Client

from tests.support import PASSWORD

NEW_PASSWORD = "a different and longer passphrase"


def test_it_changes_the_password(client: Client, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password_change/done/"

    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    # The session survives the change (update_session_auth_hash).
    assert client.get("/accounts/password_change/done/").status_code == 200


def test_it_refuses_a_wrong_old_password(client: Client, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 200
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_it_sends_visitors_to_log_in(client: Client, db: Any) -> None:
    response = client.get("/accounts/password_change/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
