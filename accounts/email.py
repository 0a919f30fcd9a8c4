"""A player's e-mail address: given at sign-up or on the settings page, kept once confirmed.

The address is not stored until its owner follows the link mailed to it: the
link carries the account and the address, signed (``django.core.signing``, so
nothing waits in the database) and valid for ``PASSWORD_RESET_TIMEOUT``. Only a
confirmed address is on the account, so password reset (Django's own flow,
which mails the accounts having that address) never mails someone who merely
typed another person's address.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext as _

SALT = "accounts.email.confirm"


def clean(address: str) -> str:
    address = (address or "").strip()
    validate_email(address)
    if len(address) > 254:
        raise ValidationError(_("That address is too long."))
    return address


def token_for(user: Any, address: str) -> str:
    return signing.dumps({"u": user.pk, "e": address}, salt=SALT, compress=True)


def send_confirmation(request: HttpRequest, user: Any, address: str) -> None:
    link = request.build_absolute_uri(reverse("email_confirm", args=[token_for(user, address)]))
    body = render_to_string(
        "registration/email_confirm_email.txt", {"user": user, "link": link}, request=request
    )
    send_mail(_("Confirm your e-mail address"), body, settings.DEFAULT_FROM_EMAIL, [address])


def confirm(token: str) -> tuple[Any, str]:
    """The account and the address a link confirms; ``ValueError`` if it is bad or old."""
    from .models import User

    try:
        data = signing.loads(token, salt=SALT, max_age=settings.PASSWORD_RESET_TIMEOUT)
    except signing.BadSignature:
        raise ValueError("bad link") from None
    user = User.objects.filter(pk=data.get("u"), is_active=True).first()
    if user is None:
        raise ValueError("no account")
    user.email = data["e"]
    user.save(update_fields=["email"])
    return user, data["e"]
