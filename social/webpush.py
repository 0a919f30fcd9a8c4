"""Web Push: notifications that reach a player whose tab is hidden or closed.

The VAPID key pair is made on first use and kept in ``var/vapid_private.pem``
(``VAPID_PRIVATE_KEY_FILE``; mode 600, outside git, like ``var/secret_key``),
so that every process signs with the same key and subscriptions survive
restarts. The browser subscribes with the public key
(:func:`application_server_key`) once the player opts in on the settings page;
``static/js/sw-push.js`` shows what arrives.

Messages are sent by pywebpush (aes128gcm, RFC 8291) on a small thread pool
after the commit, so that neither a request nor a pairing waits for a push
service. A subscription the push service says is gone (404 or 410) is deleted.

The server POSTs to whatever address a subscription names, so an address must be a
push service's: ``https`` to a host on the public internet. An IP literal, ``localhost``
or a name without a dot is refused when the subscription is made, and at each send
the host's addresses are looked up and every one must be a global address (never
loopback, a private network, link-local or the cloud metadata address): a player's
subscription cannot make the server call into its own network.
``PUSH_PRIVATE_ENDPOINTS`` lifts this for the tests' push service on loopback.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import json
import logging
import os
import secrets
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from django.conf import settings
from django.db import connection, transaction

from .models import Preferences, PushSubscription

log = logging.getLogger(__name__)

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_vapid: Any = None


def key_path() -> Path:
    return Path(settings.VAPID_PRIVATE_KEY_FILE)


def vapid() -> Any:
    """The site's VAPID key (``py_vapid.Vapid``), created atomically on first use."""
    global _vapid
    from py_vapid import Vapid

    with _lock:
        if _vapid is not None:
            return _vapid
        path = key_path()
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fresh = Vapid()
            fresh.generate_keys()
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(fresh.private_pem())
                with contextlib.suppress(FileExistsError):  # another process won: use its key
                    os.link(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
        _vapid = Vapid.from_file(str(path))
        return _vapid


def application_server_key() -> str:
    """The public key as the browser's ``pushManager.subscribe`` wants it (base64url)."""
    raw = vapid().public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def enabled_for(user_id: int) -> bool:
    return Preferences.objects.filter(user_id=user_id, push=True).exists()


def subscribe(user: Any, info: Any) -> PushSubscription:
    """Keep a browser's ``PushSubscription.toJSON()``; ``ValueError`` if it is not one."""
    if not isinstance(info, dict):
        raise ValueError("not a subscription")
    endpoint, keys = info.get("endpoint"), info.get("keys")
    if not (isinstance(endpoint, str) and endpoint_allowed(endpoint)):
        raise ValueError("endpoint")
    if not isinstance(keys, dict) or not all(
        isinstance(keys.get(k), str) and 0 < len(keys[k]) <= 200 for k in ("p256dh", "auth")
    ):
        raise ValueError("keys")
    if len(endpoint) > 1000:
        raise ValueError("endpoint")
    if not all(s.isprintable() for s in (endpoint, keys["p256dh"], keys["auth"])):
        raise ValueError("control characters")  # a NUL is even a 500 on PostgreSQL
    sub, _created = PushSubscription.objects.update_or_create(
        endpoint=endpoint, defaults={"user": user, "p256dh": keys["p256dh"], "auth": keys["auth"]}
    )
    Preferences.objects.update_or_create(user=user, defaults={"push": True})
    return sub


def endpoint_allowed(endpoint: str, *, resolve: bool = False) -> bool:
    """Whether ``endpoint`` may be a push service: ``https`` to a named host on the
    public internet; with ``resolve``, every address the host has now is global."""
    try:
        url = urlsplit(endpoint)
        port = url.port or 443
    except ValueError:
        return False
    host = url.hostname
    if not host:
        return False
    if getattr(settings, "PUSH_PRIVATE_ENDPOINTS", False):
        return url.scheme in ("https", "http")
    if url.scheme != "https" or "." not in host or host.endswith((".localhost", ".local")):
        return False
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)
        return False  # push services are named; a bare address is somebody's machine
    if not resolve:
        return True
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(a[4][0]).is_global for a in found)


def send_after_commit(user_id: int, payload: dict[str, Any]) -> None:
    """Push ``payload`` (JSON) to every subscription of an opted-in player, after the commit."""

    def go() -> None:
        if not enabled_for(user_id):
            return
        subs = list(PushSubscription.objects.filter(user_id=user_id))
        for sub in subs:
            _executor().submit(_deliver, sub.pk, sub.endpoint, sub.p256dh, sub.auth, payload)

    transaction.on_commit(go)


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="webpush")
        return _pool


def _deliver(sub_id: int, endpoint: str, p256dh: str, auth: str, payload: dict[str, Any]) -> None:
    from pywebpush import WebPushException, webpush

    if not endpoint_allowed(endpoint, resolve=True):
        log.warning("web push to subscription %s skipped: not a public push service", sub_id)
        return
    try:
        webpush(
            {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}},
            json.dumps(payload),
            vapid_private_key=vapid(),
            vapid_claims={"sub": settings.VAPID_SUBJECT},
            ttl=300,
            timeout=10,
        )
    except WebPushException as e:
        status = getattr(e.response, "status_code", None)
        if status in (404, 410):
            PushSubscription.objects.filter(pk=sub_id).delete()
        log.warning("web push to subscription %s failed: %s", sub_id, status or e)
    except Exception:
        log.exception("web push to subscription %s failed", sub_id)
    finally:
        # A pool thread used the database only if a subscription was gone: let it go.
        connection.close()
