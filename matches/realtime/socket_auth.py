"""Who opened a WebSocket, and from which page: checked by the consumers themselves.

Channels' ``AllowedHostsOriginValidator`` and ``AuthMiddlewareStack`` refuse a
socket before it is accepted, which a browser sees as a failed HTTP handshake,
not as the close codes docs/protocol.md promises; and they load the session on
the process's one thread-sensitive thread. Here the consumers accept, then close
with **4401** (not logged in) or **4403** (a foreign origin, or no seat), and
the session is read on the database threads (``matches.play.db``).

**Origin.** A browser names the page that opened the socket. It must be this
site: the same scheme, host and port as the socket itself (``ws`` ↔ ``http``,
``wss`` ↔ ``https``; behind a TLS proxy the forwarded scheme when
``SECURE_PROXY_SSL_HEADER`` is set), or one of ``CSRF_TRUSTED_ORIGINS``; and
the host must be one of ``ALLOWED_HOSTS``. A foreign page can thus never ride
on a player's cookie.

**Bot tokens.** A socket that sends ``Authorization: Bearer <token>`` (a bot
account's API token, ``accounts.tokens``) is the token's account and nobody
else: its cookie, if any, is not read, and a bad token is 4401. It needs no
``Origin``: browsers cannot send that header, so no page can make a visitor's
browser open such a socket.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.http import parse_cookie
from django.http.request import split_domain_port, validate_host
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from matches.play.compiled import OneRow

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_TRY_LATER = 1013  # RFC 6455 "Try Again Later": a service we need is unreachable
CLOSE_RESTARTING = 1012  # RFC 6455 "Service Restart": this process is shutting down


def header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def cookies(scope: dict[str, Any]) -> dict[str, str]:
    raw = header(scope, b"cookie")
    return parse_cookie(raw) if raw else {}


def _forwarded_https(scope: dict[str, Any]) -> bool:
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not proxy:
        return False
    name, value = proxy
    # HTTP_X_FORWARDED_PROTO -> x-forwarded-proto
    wanted = name.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
    got = header(scope, wanted)
    return got is not None and got.split(",")[0].strip() == value


def own_origin(scope: dict[str, Any]) -> str | None:
    """``scheme://host[:port]`` of the page this socket's host serves, if the host is ours."""
    host = header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    secure = scope.get("scheme") == "wss" or _forwarded_https(scope)
    return _normal(f"{'https' if secure else 'http'}://{host}")


def _normal(origin: str) -> str | None:
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    netloc = parts.hostname if port in (None, default) else f"{parts.hostname}:{port}"
    if ":" in parts.hostname and not netloc.startswith("["):
        netloc = f"[{parts.hostname}]" + ("" if port in (None, default) else f":{port}")
    return f"{parts.scheme}://{netloc}"


def bearer_token(scope: dict[str, Any]) -> str | None:
    """The socket's bearer token: ``None`` without an ``Authorization`` header, else
    the token (``""`` when the header holds none)."""
    from accounts.tokens import bearer

    return bearer(header(scope, b"authorization"))


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the socket's ``Origin`` is this site (scheme, host and port).

    A bot's token socket needs none (module docstring): its user is found by the
    token alone.
    """
    if bearer_token(scope):
        return True
    origin = header(scope, b"origin")
    if not origin:
        return False
    theirs = _normal(origin)
    if theirs is None:
        return False
    trusted = {_normal(o) for o in getattr(settings, "CSRF_TRUSTED_ORIGINS", [])}
    return theirs == own_origin(scope) or theirs in trusted


_DB_SESSIONS = "django.contrib.sessions.backends.db"

# A handshake's two reads, compiled once (``matches.play.compiled``): the session row
# by its key, and the user by id.
_session_row = OneRow(lambda key: Session.objects.filter(session_key=key), str)
_user_row = OneRow(lambda pk: get_user_model()._default_manager.filter(pk=pk), int)


def _session_data(session_key: str) -> dict[str, Any]:
    """What the session holds (``{}``: no such session, or it expired), as its store
    loads it; the database's sessions with one compiled read."""
    engine = import_module(settings.SESSION_ENGINE)
    if settings.SESSION_ENGINE != _DB_SESSIONS:
        return dict(engine.SessionStore(session_key).load())
    store = engine.SessionStore(session_key)
    key = store.session_key
    if key is None or not (key.isascii() and key.isalnum()):
        return {}  # not a key the store would find (too short; not of its letters)
    row = _session_row(key)
    if row is None or row.expire_date <= timezone.now():  # as the store: expired is gone
        return {}
    return dict(store.decode(row.session_data))


def _user_by_id(backend: Any, user_id: Any) -> Any | None:
    """``backend.get_user(user_id)``; Django's own backend's with one compiled read."""
    if type(backend).get_user is not ModelBackend.get_user or not isinstance(user_id, int):
        return backend.get_user(user_id)
    user = _user_row(user_id)
    return user if user is not None and backend.user_can_authenticate(user) else None


def user_for_session(session_key: str | None) -> Any | None:
    """The logged-in user of a session cookie, as ``django.contrib.auth.get_user`` finds it."""
    if not session_key:
        return None
    session = _session_data(session_key)
    try:
        user_id = get_user_model()._meta.pk.to_python(session[SESSION_KEY])
        backend_path = session[BACKEND_SESSION_KEY]
    except (KeyError, ValidationError):
        return None
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    backend = load_backend(backend_path)
    if not hasattr(backend, "get_user"):
        return None
    user = _user_by_id(backend, user_id)
    if user is None:
        return None
    # A password change logs out every other session (the session hash, as Django does).
    stored = session.get(HASH_SESSION_KEY)
    if not stored:
        return None
    hashes = [user.get_session_auth_hash()]
    if hasattr(user, "get_session_auth_fallback_hash"):
        hashes += list(user.get_session_auth_fallback_hash())
    if not any(constant_time_compare(stored, h) for h in hashes):
        return None
    return user


def scope_user(scope: dict[str, Any]) -> Any | None:
    """The user of this socket (a test may put one in ``scope["user"]``), or ``None``."""
    given = scope.get("user")
    if given is not None and getattr(given, "is_authenticated", False):
        return given
    token = bearer_token(scope)
    if token is not None:
        from accounts.tokens import user_for_token

        return user_for_token(token)
    return user_for_session(cookies(scope).get(settings.SESSION_COOKIE_NAME))
