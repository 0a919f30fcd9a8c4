"""Web Push end to end without a browser: a subscription with our own key pair to an
endpoint on loopback; what arrives is decrypted (RFC 8291, http_ece) and read."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from matches.models import Match
from matches.play.act import act
from matches.play.timing import now_ms
from social import challenges, presence, turns, webpush
from social.models import PushSubscription
from tests.support import Tables

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 10.0


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class PushService:
    """A push service on loopback: keeps each POST's headers and body; 201 like FCM's."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes, str]] = []
        self.status = 201
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length", "0"))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.received.append((headers, self.rfile.read(n), self.path))
                self.send_response(outer.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def wait(self, n: int) -> list[tuple[dict[str, str], bytes, str]]:
        end = time.monotonic() + DEADLINE_S
        while len(self.received) < n:
            assert time.monotonic() < end, f"{n} push(es) not received within {DEADLINE_S} s"
            time.sleep(0.02)
        return self.received


class Browser:
    """The browser's side of a subscription: its ECDH key pair and auth secret."""

    def __init__(self, endpoint: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        pub = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.subscription = {
            "endpoint": endpoint,
            "keys": {"p256dh": _b64(pub), "auth": _b64(self.auth)},
        }

    def read(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth,
                                 version="aes128gcm")  # fmt: skip
        return json.loads(plain)


@pytest.fixture
def push_service(settings: Any) -> Iterator[PushService]:
    settings.PUSH_PRIVATE_ENDPOINTS = True  # this push service is on loopback, over http
    s = PushService()
    yield s
    s.server.shutdown()


def _drain() -> None:
    """Wait for every push already handed to the pool."""
    pool = webpush._pool
    if pool is not None:
        pool.shutdown(wait=True)
        webpush._pool = None


@pytest.mark.parametrize(
    ("lang", "text"),
    [("ja", "aliceさんからカジュアル対局の申し込みです。"),
     ("en", "alice challenges you to a casual match.")],
)  # fmt: skip
def test_a_challenge_to_a_hidden_page_is_pushed_encrypted_and_signed(
    api: Any, alice: Any, bob: Any, push_service: PushService, lang: str, text: str
) -> None:
    browser = Browser(push_service.url("/push/bob-1"))
    c = api(bob)
    c.cookies["django_language"] = lang
    r = c.post_json("/api/push/", browser.subscription)
    assert r.status_code == 201
    c.post_json("/api/presence/", {"hidden": True})  # from a page in ``lang``

    challenges.create(alice, "bob")
    ((headers, body, _path),) = push_service.wait(1)

    payload = browser.read(body)
    assert payload["kind"] == "challenge" and payload["from"] == "alice"
    assert payload["url"] == "/notifications/" and payload["text"] == text
    assert headers["content-encoding"] == "aes128gcm"
    # Signed with the site's VAPID key: the one the settings page gives the browser.
    assert f"k={webpush.application_server_key()}" in headers["authorization"]


def test_nothing_is_pushed_while_the_page_is_visible_or_without_opting_in(
    api: Any, alice: Any, bob: Any, carol: Any, push_service: PushService
) -> None:
    browser = Browser(push_service.url("/push/bob-2"))
    api(bob).post_json("/api/push/", browser.subscription)
    api(bob).post_json("/api/presence/", {"hidden": False})
    challenges.create(alice, "bob")  # visible: the bell is enough
    api(bob).post_json("/api/presence/", {"hidden": True})
    challenges.create(carol, "bob")
    _drain()
    assert [browser.read(b)["from"] for _h, b, _p in push_service.received] == ["carol"]

    api(bob).post("/settings/", {"sound": "on"})  # push unticked: subscriptions go
    assert not PushSubscription.objects.filter(user=bob).exists()
    presence.set_hidden(bob.pk, True)
    challenges.cancel(challenges.between(carol, bob).pk, carol)
    challenges.create(carol, "bob")
    _drain()
    assert len(push_service.received) == 1


def test_your_turn_is_pushed_once_per_decision_to_the_hidden_player_to_act(
    api: Any, alice: Any, bob: Any, push_service: PushService
) -> None:
    browsers = {}
    for u in (alice, bob):
        browsers[u.pk] = Browser(push_service.url(f"/push/{u.username}"))
        api(u).post_json("/api/push/", browsers[u.pk].subscription)
        presence.set_hidden(u.pk, True)
    m = Tables().casual(alice, bob)
    for u in (alice, bob):
        act(m.pk, u, {"op": "start", "version": Match.objects.get(pk=m.pk).version},
                     now_ms())  # fmt: skip
    m.refresh_from_db()
    to_act = m.player0 if m.state["to_act"] == 0 else m.player1
    assert turns.push_turns() == 1
    assert turns.push_turns() == 0  # the same decision: announced once
    # Two pushes: the invite's creator heard that it was accepted, then the turn.
    by_name = {u.username: browsers[u.pk] for u in (alice, bob)}
    got = [(p, by_name[p.rsplit("/", 1)[1]].read(body)) for _h, body, p in push_service.wait(2)]
    assert [(p, b["kind"]) for p, b in got if b["kind"] != "your_turn"] == [
        (f"/push/{alice.username}", "invite_accepted")
    ]
    ((path, payload),) = [(p, b) for p, b in got if b["kind"] == "your_turn"]
    assert path == f"/push/{to_act.username}"
    assert payload["url"] == f"/matches/{m.pk}/"
    # Back on the page: no push for the next decision.
    presence.set_hidden(to_act.pk, False)
    Match.objects.filter(pk=m.pk).update(version=m.version + 1)
    assert turns.push_turns() == 0


def test_a_bad_subscription_is_refused(api: Any, bob: Any) -> None:
    c = api(bob)
    for bad in ({}, {"endpoint": "ftp://x"}, {"endpoint": "https://x", "keys": {"p256dh": "a"}}):
        assert c.post_json("/api/push/", bad).status_code == 400
    assert not PushSubscription.objects.exists()
    assert len(c.get("/api/push/").json()["public_key"]) == 87  # 65 bytes, base64url


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://fcm.googleapis.com/fcm/send/x",  # not https
        "https://127.0.0.1/push",
        "https://10.1.2.3/push",
        "https://169.254.169.254/latest/meta-data/",  # a cloud's metadata service
        "https://[::1]/push",
        "https://localhost/push",
        "https://db/push",  # a name without a dot: a neighbour on the network
        "https://printer.local/push",
        "https://fcm.googleapis.com:99999/x",  # no such port
    ],
)
def test_a_subscription_to_anything_but_a_public_push_service_is_refused(
    api: Any, bob: Any, endpoint: str
) -> None:
    sub = {"endpoint": endpoint, "keys": {"p256dh": "k" * 87, "auth": "a" * 22}}
    assert api(bob).post_json("/api/push/", sub).status_code == 400
    assert not PushSubscription.objects.exists()


def test_a_public_push_service_is_kept(api: Any, bob: Any) -> None:
    sub = {"endpoint": "https://fcm.googleapis.com/fcm/send/abc",
           "keys": {"p256dh": "k" * 87, "auth": "a" * 22}}  # fmt: skip
    assert api(bob).post_json("/api/push/", sub).status_code == 201
    assert PushSubscription.objects.get().endpoint == sub["endpoint"]


@pytest.mark.parametrize(("address", "sent"), [("10.0.0.5", False), ("127.0.0.1", False),
                                               ("142.250.74.10", True)])  # fmt: skip
def test_a_push_goes_only_to_a_host_whose_addresses_are_all_public(
    monkeypatch: pytest.MonkeyPatch, address: str, sent: bool
) -> None:
    # A name that pointed somewhere public when it was subscribed can point inside later
    # (DNS rebinding): every send looks the host up again.
    import pywebpush

    monkeypatch.setattr(webpush.socket, "getaddrinfo",
                        lambda *a, **k: [(2, 1, 6, "", (address, 443))])  # fmt: skip
    calls: list[str] = []
    monkeypatch.setattr(pywebpush, "webpush", lambda info, *a, **k: calls.append(info["endpoint"]))
    webpush._deliver(1, "https://push.example.com/x", "k", "a", {"title": "t"})
    assert calls == (["https://push.example.com/x"] if sent else [])


def test_a_subscription_the_push_service_calls_gone_is_forgotten(
    api: Any, alice: Any, bob: Any, push_service: PushService
) -> None:
    browser = Browser(push_service.url("/push/bob-gone"))
    api(bob).post_json("/api/push/", browser.subscription)
    presence.set_hidden(bob.pk, True)
    push_service.status = 410  # the browser unsubscribed
    challenges.create(alice, "bob")
    push_service.wait(1)
    _drain()
    assert not PushSubscription.objects.filter(user=bob).exists()
