"""Every page is sent with a strict Content-Security-Policy and a Permissions-Policy.

The policy runs no inline script and no inline handler, so the templates hold
none (their behaviour is in static/js/); the browser test
(tests/e2e/test_browser_csp.py) shows the pages still work under it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[^>]*\s(on[a-z]+)\s*=", re.I)
JS_URL = re.compile(r"""(href|src|action)\s*=\s*["']\s*javascript:""", re.I)


def _directives(header: str) -> dict[str, list[str]]:
    out = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


@pytest.mark.parametrize("path", ["/", "/rules/", "/signup/", "/accounts/login/", "/leaderboard/"])
def test_pages_are_sent_with_a_strict_policy(db: Any, path: str) -> None:
    r = Client().get(path, follow=True)
    assert r.status_code == 200
    csp = _directives(r["Content-Security-Policy"])
    assert csp["default-src"] == ["'self'"]
    assert "'unsafe-inline'" not in csp["script-src"] and "'unsafe-eval'" not in csp["script-src"]
    assert csp["script-src"][0] == "'self'"
    assert csp["object-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in csp["style-src"]
    policy = r["Permissions-Policy"]
    for feature in ("camera=()", "microphone=()", "geolocation=()", "payment=()"):
        assert feature in policy


def test_error_pages_and_the_admin_carry_the_policy_too(db: Any, admin_client: Any) -> None:
    assert "Content-Security-Policy" in Client().get("/no-such-page/")
    assert "Content-Security-Policy" in admin_client.get("/admin/")


def test_no_template_holds_an_inline_script_or_handler() -> None:
    found = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        for pattern in (INLINE_SCRIPT, INLINE_HANDLER, JS_URL):
            found += [
                f"{path.relative_to(ROOT)}: {m.group(0)[:60]}" for m in pattern.finditer(text)
            ]
    assert found == []
