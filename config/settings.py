"""Settings for Spectacular Bid online, all in one file, all from the environment.

With nothing set you get the embedded default: DEBUG on with a development
key, SQLite at ``BASE_DIR/db.sqlite3``, the in-memory channel layer and
in-process (asyncio) deadline timers: one ASGI process, no server to install.

Setting ``DATABASE_URL`` (e.g. ``postgres://user@host:5432/spectacular``) moves
the data to PostgreSQL; setting ``REDIS_URL`` switches on the Redis channel layer
and Celery (broker and deadline timers), so that any number of Daphne processes
and workers can serve any seat.

Every value read here is checked: a value that cannot be understood (``DEBUG=maybe``,
``SB_DEAL_SEED=abc``, an unknown database scheme) stops the process at start-up with
``ImproperlyConfigured`` naming the variable, instead of running with a guess.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def envbool(name: str, default: bool) -> bool:
    """Read a yes/no variable: 1/0, true/false, yes/no, on/off (any case).

    Unset or empty gives ``default``; anything else is an error, never a guess.
    """
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a yes/no value; use one of: true, false, 1, 0, yes, no, on, off."
    )


def envint(name: str, default: int | None) -> int | None:
    """Read a whole number; unset or empty gives ``default``, anything else is an error."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None


def envstr(name: str, default: str) -> str:
    """Read a string; unset or empty gives ``default``."""
    return os.environ.get(name, "").strip() or default


def envlist(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list (``a.example,b.example``); unset or empty gives ``default``."""
    value = os.environ.get(name, "").strip()
    if not value:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """Read one of a fixed set of words; anything else is an error."""
    value = envstr(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}.")
    return value


# True under pytest or `manage.py test`: the only place besides DEBUG where a
# fixed deal seed is allowed.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]

# --- Core ----------------------------------------------------------------------

DEBUG = envbool("DEBUG", True)

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
SECRET_KEY = envstr("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is false (e.g. a long random string: "
            'python -c "import secrets; print(secrets.token_urlsafe(50))").'
        )
    SECRET_KEY = _DEV_SECRET_KEY

# With DEBUG on, the local names are allowed; a real deployment names its hosts.
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set when DEBUG is false (comma-separated host names)."
    )
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

# Behind TLS: secure cookies, the redirect to https and HSTS. All off by default so
# that http://127.0.0.1 works.
SECURE_COOKIES = envbool("SECURE_COOKIES", False)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
if envbool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    # daphne first: `manage.py runserver` then serves ASGI (HTTP + WebSocket).
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "accounts",
    "matches",
    "ratings",
    "history",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database --------------------------------------------------------------------

_DEFAULT_DATABASE_URL = f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
try:
    _database = dj_database_url.parse(
        envstr("DATABASE_URL", _DEFAULT_DATABASE_URL), conn_health_checks=True
    )
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a usable database URL: {exc}") from None
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite's default DEFERRED transactions take the write lock only at the first
    # write, so two concurrent "lock the match row, then write" transactions
    # deadlock and one fails with "database is locked". IMMEDIATE takes the
    # write lock at BEGIN: the embedded default then serializes every
    # transaction.atomic() the way select_for_update() does on PostgreSQL.
    _database["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,  # seconds to wait for the lock before "database is locked"
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        **_database.get("OPTIONS", {}),
    }
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer, Celery and the deadline timers -----------------------------

REDIS_URL = envstr("REDIS_URL", "")

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# How a decision's deadline is enforced when nobody acts: "asyncio" timers in the
# ASGI process (one process only) or Celery tasks with an ETA (any number).
MATCH_TIMERS = envchoice(
    "MATCH_TIMERS", "celery" if REDIS_URL else "asyncio", ("asyncio", "celery")
)
if MATCH_TIMERS == "celery" and not REDIS_URL:
    raise ImproperlyConfigured("MATCH_TIMERS=celery needs REDIS_URL (the Celery broker).")

# Without Redis, Celery gets an in-process broker so nothing ever dials out.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_ENABLE_UTC = True
# Periodic tasks (`celery -A config beat`); the embedded default runs the same
# jobs on the web process's asyncio loop (matches/periodic.py). A run that waited
# longer than its period is dropped: the next one does the same work.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "matchmaking-sweep": {
        "task": "matches.tasks.matchmaking_sweep",
        "schedule": 2.0,
        "options": {"expires": 2.0},
    },
    "heartbeat": {
        "task": "matches.tasks.heartbeat",
        "schedule": 1.0,
        "options": {"expires": 5.0},
    },
    "fault-scan": {
        "task": "matches.tasks.fault_scan",
        "schedule": 2.0,
        "options": {"expires": 2.0},
    },
}

# --- Load harness --------------------------------------------------------------------

# The echo baseline of `make bench-load` (matches/echo.py): a relay through one
# group_send at /ws/echo/<room>/. Off by default so that production does not expose it.
BENCH_ECHO = envbool("BENCH_ECHO", False)

# --- Deals -------------------------------------------------------------------------

# Tests only: when set, a match's deals come from
# random.Random(f"{DEAL_SEED}:{match_id}:{hand_no}"), so a test knows the hands.
# A live server must never deal predictably, hence the refusal below.
DEAL_SEED = envint("SB_DEAL_SEED", None)
if DEAL_SEED is not None and not (DEBUG or TESTING):
    raise ImproperlyConfigured(
        "SB_DEAL_SEED makes every deal predictable; it is refused unless DEBUG is on "
        "or tests are running."
    )

# --- Accounts ----------------------------------------------------------------------

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

if TESTING:
    # Tests create many users; the real hasher's deliberate slowness buys nothing there.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Language and time ---------------------------------------------------------------

LANGUAGE_CODE = "ja"
LANGUAGES = [("ja", "日本語"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = envstr("TIME_ZONE", "Asia/Tokyo")
USE_TZ = True

# --- Static files ------------------------------------------------------------------------

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Daphne serves no files of its own: config/asgi.py puts Django's static-files
# handler in front of the HTTP app while this is on. Turn it off when a reverse
# proxy serves STATIC_ROOT (after `manage.py collectstatic`).
SERVE_STATIC = envbool("SERVE_STATIC", True)

# --- Logging -------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
