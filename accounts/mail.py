"""The embedded default's mail: written to the server's log, not sent.

With no ``EMAIL_HOST`` there is no mail server to talk to; a password-reset
link written to the log lets whoever runs the server help a player (and lets a
developer follow it). The pages that send mail say so (``mail_is_logged``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend

log = logging.getLogger("accounts.mail")


def mail_is_logged() -> bool:
    return settings.EMAIL_BACKEND == "accounts.mail.LogBackend"


class LogBackend(BaseEmailBackend):
    def send_messages(self, email_messages: Sequence[Any]) -> int:
        for m in email_messages:
            log.warning(
                "No EMAIL_HOST is set: this mail is not sent.\nTo: %s\nSubject: %s\n\n%s",
                ", ".join(m.to),
                m.subject,
                m.body,
            )
        return len(email_messages)
