"""A real SMTP server's inbox for the e-mail tests (aiosmtpd's handler on loopback)."""

from __future__ import annotations

import email
import time
from email.message import Message
from typing import Any


class Inbox:
    """Collects what the SMTP server receives; ``wait`` polls with a deadline."""

    def __init__(self, deadline_s: float = 10.0) -> None:
        self.deadline_s = deadline_s
        self.messages: list[Message] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"

    def wait(self, n: int = 1) -> list[Message]:
        end = time.monotonic() + self.deadline_s
        while len(self.messages) < n:
            assert time.monotonic() < end, f"{n} mail(s) not received within {self.deadline_s} s"
            time.sleep(0.02)
        return self.messages
