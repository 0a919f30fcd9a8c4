"""What the abuse probes share: a sign-up and a log-in over HTTP."""

from __future__ import annotations

from typing import Any

from django.test import Client

from tests.support import PASSWORD

SIGNUP_PASSWORD = "a long and unusual passphrase 93"


def sign_up(client: Client, username: str, ip: str = "198.51.100.20", **extra: Any) -> Any:
    data = {"username": username, "password1": SIGNUP_PASSWORD, "password2": SIGNUP_PASSWORD}
    return client.post("/signup/", data, REMOTE_ADDR=ip, **extra)


def log_in(client: Client, username: str, password: str = PASSWORD, ip: str = "") -> Any:
    extra = {"REMOTE_ADDR": ip} if ip else {}
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session
