from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client


def test_staff_see_the_users_in_the_admin(client: Client, alice: Any, bob: Any) -> None:
    admin = get_user_model().objects.create_superuser("root", password="x" * 20)
    client.force_login(admin)
    response = client.get("/admin/accounts/user/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "alice" in page
    assert "bob" in page
    assert "スペクタキュラー・ビッド管理" in page


def test_a_player_cannot_open_the_admin(client: Client, alice: Any) -> None:
    client.force_login(alice)
    response = client.get("/admin/accounts/user/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
