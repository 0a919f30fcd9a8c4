"""Settings for Spectacular Bid online, all in one file, all from the environment.

With nothing set you get the embedded default: DEBUG off, a secret key made on
first run (``var/secret_key``), SQLite at ``BASE_DIR/db.sqlite3``, the in-memory channel layer and
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

import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from config import secret_key
from config.env import (  # the checked readers of the environment
    envbool,
    envchoice,
    envint,
    envlist,
    envrate,
    envstr,
    envthreshold,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# True under pytest or `manage.py test`: the only place besides DEBUG where a
# fixed deal seed is allowed.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]

# --- Core ----------------------------------------------------------------------

# Off unless asked for: DEBUG pages list every URL and show the settings, so a
# server started with nothing set must not serve them. `make dev` turns it on.
DEBUG = envbool("DEBUG", False)

# A key from the environment, else one made on first run and kept in
# var/secret_key (outside git, mode 600; see config/secret_key.py). Several
# machines serving one site must share a key: give them SECRET_KEY.
SECRET_KEY = envstr("SECRET_KEY", "") or secret_key.read_or_create(
    Path(envstr("SECRET_KEY_FILE", str(BASE_DIR / "var" / "secret_key")))
)

# The local names, so that `make run` works at http://127.0.0.1:8000; a real
# deployment names its own hosts.
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

# Behind TLS: secure cookies, the redirect to https and HSTS. All off by default so
# that http://127.0.0.1 works.
SECURE_COOKIES = envbool("SECURE_COOKIES", False)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
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
    "health_check",
    "axes",
    "csp",
    "accounts",
    "matches",
    "ratings",
    "history",
    "social",
    "tournaments",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Hashed static files, compressed ahead of time and cached for a year (whitenoise).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Compresses only responses that carry no secret (config/compression.py: BREACH).
    "config.compression.SafeGZipMiddleware",
    # The Content-Security-Policy and Permissions-Policy headers (below, "Browser policies").
    "csp.middleware.CSPMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    # New work refused while saturated before the session and the user are read
    # (matches/lobby/admission_http.py: the cheap door; the pacer's after auth, below).
    "matches.lobby.admission_http.refuse_early",
    # A session cookie that is no session key (a NUL in it was a 500 on every page) is
    # dropped before the session is read (config/session_cookie.py).
    "config.session_cookie.drop_malformed_session_cookie",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Bot accounts' `Authorization: Bearer` on /api/ and /queue/ (accounts/tokens.py):
    # replaces the session's user and answers a bad token (401) or too many calls (429).
    "accounts.tokens.bearer_auth",
    # Anonymous /api/ calls get 401 JSON here, before the CSRF check (process_view).
    "accounts.api.api_login_required",
    # New matches, invites, the queue: 503 + Retry-After while saturated
    # (matches/play/admission.py).
    "matches.lobby.admission_http.refuse_when_saturated",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a refused log-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# --- Browser policies ---------------------------------------------------------------

# Content-Security-Policy (django-csp): scripts, styles, images and sockets from
# this site only. No inline script runs and no onclick= handler (page behaviour
# is in static/js/); a script that must stay inline takes the request's nonce
# (``{{ request.csp_nonce }}``). Inline style *attributes* stay allowed: the
# board's size, a clock's bar, a replay's bar widths are computed per page as
# style="--w: 40%"; a style attribute cannot run code. Pages may not be framed
# (clickjacking) nor send forms elsewhere. 'self' covers the same host's ws://
# and wss:// for the match and lobby sockets.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# Permissions-Policy (django-permissions-policy): no page of ours uses the
# camera, the microphone, the position or payment, so no page (nor anything
# injected into one) may ask for them; full screen only for the site itself.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    "accelerometer": [],
    "camera": [],
    "display-capture": [],
    "fullscreen": ["self"],
    "geolocation": [],
    "gyroscope": [],
    "hid": [],
    "idle-detection": [],
    "magnetometer": [],
    "microphone": [],
    "payment": [],
    "serial": [],
    "usb": [],
    "browsing-topics": [],
}

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
                "social.context.bell",
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
elif _database["ENGINE"] == "django.db.backends.postgresql":
    # A bounded pool per process (psycopg_pool, Django 5.2): no load can open
    # more than DB_POOL_SIZE connections, and none is left behind after it.
    # Connections go back to the pool after every request and socket call.
    _database["CONN_MAX_AGE"] = 0
    _database["CONN_HEALTH_CHECKS"] = False
    # Parameters bound by the server: no quoting of the state's JSON text on every
    # move, and psycopg prepares the statements a connection runs often (the
    # move's three).
    _database.setdefault("OPTIONS", {})["server_side_binding"] = True
    _database["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": envint("DB_POOL_SIZE", 10),
        "timeout": 10,  # seconds a request waits for a free connection
        "max_idle": 60,
    }
DATABASES = {"default": _database}
# The web process's match threads (matches/play/db.py): PostgreSQL's row locks let
# several matches write at once; SQLite serializes every write anyway.
MATCH_DB_THREADS = envint(
    "MATCH_DB_THREADS", 1 if _database["ENGINE"] == "django.db.backends.sqlite3" else 4
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Admission control (matches/play/admission.py): past any of these limits a web process
# refuses new work (503 + Retry-After) and keeps serving the matches being played; from
# half of one it starts at most ADMISSION_PACE_PER_S new matches a second, fewer nearer it.
# Off by default under tests: a loaded test machine's slow moments must not refuse a
# test's own requests (tests/matches/test_admission.py switches it on).
ADMISSION = envbool("ADMISSION", not TESTING)
ADMISSION_LOOP_LAG_MS = envint("ADMISSION_LOOP_LAG_MS", 250)
ADMISSION_DB_WAIT_MS = envint("ADMISSION_DB_WAIT_MS", 250)
ADMISSION_HANDSHAKE_WAIT_MS = envint("ADMISSION_HANDSHAKE_WAIT_MS", 2000)
ADMISSION_QUEUED_FRAMES = envint("ADMISSION_QUEUED_FRAMES", 8)
# 150 ms since 2026-12-06 (README, "The push delay's limit"): past saturation the same
# moves a second as at 200, with a shorter tail for the matches being played.
ADMISSION_PUSH_DELAY_MS = envint("ADMISSION_PUSH_DELAY_MS", 150)
ADMISSION_OPENING_SOCKETS = envint("ADMISSION_OPENING_SOCKETS", 40)
ADMISSION_PACE_PER_S = envint("ADMISSION_PACE_PER_S", 4)
ADMISSION_RETRY_AFTER_S = envint("ADMISSION_RETRY_AFTER_S", 5)
ADMISSION_RETRY_AFTER_MAX_S = envint("ADMISSION_RETRY_AFTER_MAX_S", 30)
# Each web process's Prometheus metrics on 127.0.0.1:<port> (matches/clock/metrics.py); also
# GET /metrics for staff. Unset: no port of its own.
METRICS_PORT = envint("METRICS_PORT", None)

# --- Redis: channel layer, Celery and the deadline timers -----------------------------

REDIS_URL = envstr("REDIS_URL", "")

# The channel layer on Redis is channels-redis's pub/sub layer: a change is
# PUBLISHed once per audience and each web process, subscribed to the groups
# its sockets are in, hands it to them. (The list-based RedisChannelLayer took
# about three round trips per group_send and a BRPOP per receive, and a quarter
# of a web process's CPU under load.) Its connections: a read timeout well above
# any wait (redis-py 8.x defaults to 5 s, which with the list layer's 5 s BRPOP
# killed every socket idle for 5 s), keepalive and a health check to find a dead
# connection, and a pool sized for bursts of publishes.
CHANNEL_LAYER_READ_TIMEOUT_S = 20
REDIS_LAYER_POOL = envint("REDIS_LAYER_POOL", 1000)


def redis_channel_layer(url: str, **config: object) -> dict[str, object]:
    """The ``CHANNEL_LAYERS["default"]`` entry for Redis at ``url`` (tests use it too)."""
    host = {
        "address": url,
        "socket_timeout": CHANNEL_LAYER_READ_TIMEOUT_S,
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "health_check_interval": 30,
        "max_connections": REDIS_LAYER_POOL,
    }
    return {
        # channels-redis's pub/sub layer, its publishes not queued behind one another
        # (matches/realtime/layers.py).
        "BACKEND": "matches.realtime.layers.RedisPubSubLayer",
        "CONFIG": {"hosts": [host], **config},
    }


if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": redis_channel_layer(REDIS_URL, prefix=envstr("CHANNEL_LAYER_PREFIX", "asgi"))
    }
else:
    # Channels' in-memory layer, cleaning expired messages once a second
    # (matches/realtime/layers.py).
    CHANNEL_LAYERS = {"default": {"BACKEND": "matches.realtime.layers.InMemoryLayer"}}

# Where the deadline sweeper runs (matches/clock/sweeper.py): in the web process
# ("web": the embedded default, one process) or in the Celery workers ("celery").
MATCH_SWEEPER = envchoice("MATCH_SWEEPER", "celery" if REDIS_URL else "web", ("web", "celery"))
if MATCH_SWEEPER == "celery" and not REDIS_URL:
    raise ImproperlyConfigured("MATCH_SWEEPER=celery needs REDIS_URL (the Celery broker).")
# Redis keys of the web tier's proof of life (matches/clock/liveness.py).
LIVENESS_PREFIX = envstr("LIVENESS_PREFIX", "sb")
# host:port players connect to when it is not the web process itself (the proxy):
# a web process proves life only while that address accepts connections.
LIVENESS_PROBE = envstr("LIVENESS_PROBE", "")

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
# jobs on the web process's asyncio loop (matches/realtime/periodic.py). A run that waited
# longer than its period is dropped: the next one does the same work.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "matchmaking-sweep": {
        "task": "matches.tasks.matchmaking_sweep",
        "schedule": 2.0,
        "options": {"expires": 2.0},
    },
    "push-turns": {
        "task": "social.tasks.push_turns",
        "schedule": 3.0,
        "options": {"expires": 3.0},
    },
    # Arenas (tournaments/tasks.py): pairing every 2 s, standings pushed at most once a
    # second, the hourly and evening arenas made ahead every minute.
    "arena-pairing": {
        "task": "tournaments.tasks.arena_pairing",
        "schedule": 2.0,
        "options": {"expires": 2.0},
    },
    "arena-standings": {
        "task": "tournaments.tasks.arena_standings",
        "schedule": 1.0,
        "options": {"expires": 1.0},
    },
    "arena-schedule": {
        "task": "tournaments.tasks.arena_schedule",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
}
# A waiting arena player whose page has been gone this long is paused (tournaments/).
ARENA_PAUSE_GRACE_S = envint("ARENA_PAUSE_GRACE_S", 20)
# After a match an arena player rests this long before the next pairing (0: none).
ARENA_REST_S = envint("ARENA_REST_S", 6)

# The bot tokens' rate limits (django-ratelimit, accounts/tokens.py) count in this
# cache: Redis when there is one, so that every web process counts the same
# calls; else this one process's memory (the embedded default has one process).
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": envstr("CHANNEL_LAYER_PREFIX", "asgi") + ":rl",
    }
    if REDIS_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "ratelimit"},
}
RATELIMIT_USE_CACHE = "ratelimit"
# Requests per token on /api/ and /queue/ (429 past it), and token creations and
# rotations per account: "count/period", period s, m, h or d ("120/m").
BOT_TOKEN_RATE = envrate("BOT_TOKEN_RATE", "120/m")
BOT_TOKEN_ISSUE_RATE = envrate("BOT_TOKEN_ISSUE_RATE", "10/h")
# Accounts created per client address (an IPv6 address by its /64), accounts/signup_limit.py.
SIGNUP_RATE = envrate("SIGNUP_RATE", "10/h")

# Abuse budgets (matches/lobby/budgets.py, matches/realtime/budgets.py; docs/protocol.md
# "Limits"): creations per user and hour, ranked-queue joins per minute, each socket's
# frame bucket (a burst, refilled so many a second), sockets per user and spectators
# per match (per process).
INVITES_PER_HOUR = envint("INVITES_PER_HOUR", 30)
SAME_DEVICE_PER_HOUR = envint("SAME_DEVICE_PER_HOUR", 30)
COMPUTER_MATCHES_PER_HOUR = envint("COMPUTER_MATCHES_PER_HOUR", 30)
QUEUE_JOINS_PER_MINUTE = envint("QUEUE_JOINS_PER_MINUTE", 10)
SOCKET_FRAME_BURST = envint("SOCKET_FRAME_BURST", 20)
SOCKET_FRAMES_PER_S = envint("SOCKET_FRAMES_PER_S", 5)
SOCKETS_PER_USER = envint("SOCKETS_PER_USER", 30)
SPECTATORS_PER_MATCH = envint("SPECTATORS_PER_MATCH", 200)
# Rated only if really played, and not too often by one pair (matches/play/fairplay.py).
RATED_MIN_DECISIONS = envint("RATED_MIN_DECISIONS", 3)
RATED_PAIR_LIMIT = envint("RATED_PAIR_LIMIT", 2)

# --- Load harness --------------------------------------------------------------------

# The echo baseline of `make bench-load` (matches/realtime/echo.py): a relay through one
# group_send at /ws/echo/<room>/. Off by default so that production does not expose it.
BENCH_ECHO = envbool("BENCH_ECHO", False)

# --- The computer player ------------------------------------------------------------

# ms "lo,hi" after its decision began: it starts thinking at lo, and its move is
# released at hi whatever it computed (a person's pace, and no timing leak:
# matches/lobby/computer.py). Tests shorten it.
_pause = envlist("COMPUTER_PAUSE_MS", ["400", "1200"])
try:
    COMPUTER_PAUSE_MS = (int(_pause[0]), int(_pause[-1]))
except ValueError:
    raise ImproperlyConfigured(
        f"COMPUTER_PAUSE_MS={','.join(_pause)!r} is not two whole numbers (lo,hi)."
    ) from None
if not 0 <= COMPUTER_PAUSE_MS[0] <= COMPUTER_PAUSE_MS[1]:
    raise ImproperlyConfigured("COMPUTER_PAUSE_MS must be 0 <= lo <= hi.")

# --- The match's times (RULES §7, §8) -----------------------------------------------

# Every time a match obeys, read through matches/conf.py. Only tests change these
# (a real match always uses the rules' numbers), so they are not read from the
# environment.
MATCH_MAIN_MS = 120_000  # main time per player
MATCH_DELAY_MS = 10_000  # the delay before each decision's main time runs
MATCH_START_WINDOW_MS = 60_000  # both press 開始 within this, or the match is aborted
# A match made from an invite: 10 minutes, since its creator may have stepped away.
INVITE_START_WINDOW_MS = 600_000
MATCH_CONTINUE_WINDOW_MS = 30_000  # between hands: 次へ, or the next hand starts by itself
# After an outage, the seat whose decision it cut is given the time until its socket
# is back, up to this long (matches/clock/outage.py).
OUTAGE_REJOIN_MS = 30_000
# ...plus this much per match the outage froze: every socket of every match comes
# back in one wave, and the last seat in line must not pay for the wave's size
# (two sockets a match at ~20 handshakes a second, what a loaded 2-core machine took).
OUTAGE_REJOIN_PER_MATCH_MS = 100
# Tests only: the computer decides on a thread of the calling process instead of a
# process of its own (matches/lobby/computer.py).
COMPUTER_IN_PROCESS = False
# The background loops of a web process (matches/realtime/periodic.py): off under
# tests unless a test turns them on.
MATCH_BACKGROUND = not TESTING

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

# Django's list, with its PBKDF2 computed on a low-priority thread of its own
# (accounts/hashers.py): same algorithm name and format, so every stored hash
# verifies. Django's own PBKDF2PasswordHasher must not follow in the list: the
# last hasher of a name is the one that verifies it.
PASSWORD_HASHERS = [
    "accounts.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
# How many passwords one process hashes at once; the rest wait their turn.
PASSWORD_HASH_THREADS = envint("PASSWORD_HASH_THREADS", 1)
if TESTING:
    # Tests create many users; the real hasher's deliberate slowness buys nothing there.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Log-in lockout (django-axes, accounts/lockout.py): 10 failed log-ins for one
# username from one address lock that (username, address) pair, and 50 from one
# address whatever the names lock the address, for 15 minutes — the right
# password too. The owner of a name, from another address, still logs in. The
# attempts live in the database, so every process agrees.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses before any hashing
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 10)  # per (username, address)
LOGIN_ADDRESS_FAILURE_LIMIT = envint("LOGIN_ADDRESS_FAILURE_LIMIT", 50)  # per address
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "accounts.lockout.Handler"
# Attempts during a lockout neither count nor push its end back: the time the
# page promises holds.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_CLIENT_IP_CALLABLE = "accounts.lockout.client_ip"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False
AXES_DISABLE_ACCESS_LOG = True  # successful log-ins need no row of their own
# Behind N proxies of ours the client's address is the Nth entry from the right
# of X-Forwarded-For; 0 (the default) believes only the connection's address.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0)
# Password forms per client address and web process (config/throttle.py): this
# many refused posts in 10 s pass at once, later ones wait this long first (0: off).
PASSWORD_THROTTLE_FREE = envint("PASSWORD_THROTTLE_FREE", 10)
PASSWORD_THROTTLE_DELAY_MS = envint("PASSWORD_THROTTLE_DELAY_MS", 1000)
# A web process's garbage collector (config/serve.py): start-up's objects frozen
# and young collections rarer than Python's 700,10,10, whose full collections
# stalled every socket of the process (p99 at 500 matches 155 -> 19 ms).
GC_THRESHOLD = envthreshold("GC_THRESHOLD", (20_000, 20, 10))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    # Django's rule with plainer words (accounts/passwords.py).
    {"NAME": "accounts.passwords.PlainMinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- E-mail ---------------------------------------------------------------------------

# Sign-up's optional address, its confirmation link and password reset send mail
# over SMTP at EMAIL_HOST. With no EMAIL_HOST (the embedded default) every mail
# is written to the server's log instead (accounts/mail.py), and the pages that
# send one say so.
EMAIL_HOST = envstr("EMAIL_HOST", "")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "noreply@localhost")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "accounts.mail.LogBackend"
)
# A password-reset or e-mail confirmation link is valid this long (Django's setting).
PASSWORD_RESET_TIMEOUT = envint("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600)

# --- Web Push ------------------------------------------------------------------------

# The VAPID key pair that signs pushes (social/webpush.py): made on first use,
# kept outside git like the secret key. VAPID_SUBJECT tells push services whom
# to contact ("mailto:..." or an https URL).
VAPID_PRIVATE_KEY_FILE = envstr(
    "VAPID_PRIVATE_KEY_FILE", str(BASE_DIR / "var" / "vapid_private.pem")
)
VAPID_SUBJECT = envstr("VAPID_SUBJECT", f"mailto:{DEFAULT_FROM_EMAIL}")
# Push subscriptions may name any http(s) address, loopback and private networks
# included (the tests' push service); off, only https to public hosts (social/webpush.py).
PUSH_PRIVATE_ENDPOINTS = envbool("PUSH_PRIVATE_ENDPOINTS", False)

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
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # Hashed names back to their sources, for finder-based servers (config/static_storage.py).
    "config.static_storage.HashedNameFinder",
]
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# WhiteNoise serves STATIC_ROOT (filled by `manage.py collectstatic`, which `make run`,
# the release step and the test suite run) under content-hashed names, gzipped ahead of
# time and cached for a year (immutable). SERVE_STATIC=false when a reverse proxy
# serves STATIC_ROOT instead.
SERVE_STATIC = envbool("SERVE_STATIC", True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "config.static_storage.StaticStorage"},
}
# Files not collected are still served, from the source folders (config/static_storage.py);
# with DEBUG on (`make dev`) they are looked up on every request, so edits show at once.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
if not SERVE_STATIC:
    MIDDLEWARE.remove("whitenoise.middleware.WhiteNoiseMiddleware")

# --- Logging -------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
