"""E-mail for real: a confirmation link and Django's password reset, through a real SMTP
server on loopback (aiosmtpd); and the embedded default, which writes mail to the log."""

from __future__ import annotations

import email
import logging
import re
from collections.abc import Iterator
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.test import Client

from accounts.models import User
from tests.mailbox import Inbox
from tests.support import PASSWORD, make_user

DEADLINE_S = 5.0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def smtp(settings: Any) -> Iterator[Inbox]:
    inbox = Inbox(DEADLINE_S)
    ctl = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    ctl.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = ctl.port
        settings.EMAIL_USE_TLS = False
        settings.DEFAULT_FROM_EMAIL = "noreply@sb.test"
        yield inbox
    finally:
        ctl.stop()


def _body(m: Message) -> str:
    part = m.get_payload(decode=True)
    assert isinstance(part, bytes)
    return part.decode(m.get_content_charset() or "utf-8")


def _link(m: Message) -> str:
    found = re.search(r"https?://[^/\s]+(/\S+)", _body(m))
    assert found, _body(m)
    return found.group(1)


def _subject(m: Message) -> str:
    return str(email.header.make_header(email.header.decode_header(m["Subject"])))


def test_sign_up_with_an_address_confirms_it_by_the_mailed_link(smtp: Inbox, db: Any) -> None:
    c = Client()
    r = c.post("/signup/", {"username": "mika", "password1": PASSWORD, "password2": PASSWORD,
                            "email": "mika@example.test"})  # fmt: skip
    assert r.status_code == 302
    user = User.objects.get(username="mika")
    assert user.email == ""  # not until the link is followed
    (m,) = smtp.wait()
    assert m["To"] == "mika@example.test" and m["From"] == "noreply@sb.test"
    r = c.get(_link(m))
    assert r.status_code == 302
    user.refresh_from_db()
    assert user.email == "mika@example.test"


def test_a_tampered_confirmation_link_changes_nothing(smtp: Inbox, db: Any) -> None:
    user = make_user("mika", PASSWORD)
    c = Client()
    c.force_login(user)
    c.post("/accounts/email/", {"email": "mika@example.test", "next": "/settings/"})
    link = _link(smtp.wait()[0])
    bad = link[:-3] + ("AAA" if not link.endswith("AAA/") else "BBB") + "/"
    c.get(bad)
    user.refresh_from_db()
    assert user.email == ""
    c.get(link)
    user.refresh_from_db()
    assert user.email == "mika@example.test"


@pytest.mark.parametrize(("lang", "subject"), [("ja", "パスワード"), ("en", "Reset your")])
def test_password_reset_through_the_mailed_link(
    smtp: Inbox, db: Any, lang: str, subject: str
) -> None:
    user = make_user("mika", "old password 123 x", email="mika@example.test")
    c = Client(headers={"accept-language": lang})
    c.cookies["django_language"] = lang
    r = c.post("/accounts/password_reset/", {"email": "mika@example.test"})
    assert r.status_code == 302 and r["Location"] == "/accounts/password_reset/done/"
    # While the mail is on its way, the page leads back to logging in (no dead end).
    done = c.get(r["Location"]).content.decode()
    assert re.search(r'<a [^>]*href="/accounts/login/"[^>]*data-testid="password-reset-back"', done)
    (m,) = smtp.wait()
    assert subject in _subject(m)
    r = c.get(_link(m), follow=True)
    assert r.status_code == 200
    form_url = r.redirect_chain[-1][0]
    new = "a new password 456 y"
    r = c.post(form_url, {"new_password1": new, "new_password2": new})
    assert r.status_code == 302 and r["Location"] == "/accounts/reset/done/"
    user.refresh_from_db()
    assert user.check_password(new)
    # The link works once.
    r = c.get(_link(m), follow=True)
    assert b'data-testid="password-reset-invalid"' in r.content


def test_password_reset_for_an_unknown_address_sends_nothing(smtp: Inbox, db: Any) -> None:
    make_user("mika", PASSWORD, email="mika@example.test")
    r = Client().post("/accounts/password_reset/", {"email": "other@example.test"})
    assert r.status_code == 302  # the same answer: whether an address is known is not told
    assert smtp.messages == []


def test_without_email_host_the_mail_goes_to_the_log_and_the_page_says_so(
    settings: Any, db: Any, caplog: Any
) -> None:
    settings.EMAIL_BACKEND = "accounts.mail.LogBackend"
    make_user("mika", PASSWORD, email="mika@example.test")
    c = Client()
    page = c.get("/accounts/password_reset/")
    assert b'data-testid="mail-logged"' in page.content
    with caplog.at_level(logging.WARNING, logger="accounts.mail"):
        r = c.post("/accounts/password_reset/", {"email": "mika@example.test"}, follow=True)
    assert b'data-testid="mail-logged"' in r.content
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert "mika@example.test" in logged and "/accounts/reset/" in logged
