"""Settings come from the environment and fail loudly on a value they cannot understand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
ENV_KEYS = (
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "MATCH_SWEEPER",
    "SB_DEAL_SEED",
    "SERVE_STATIC",
)
# Importing the module runs every check in it; no need for django.setup().
SHOW = """
import json
import config.settings as s
print(json.dumps({
    "DEBUG": s.DEBUG,
    "ENGINE": s.DATABASES["default"]["ENGINE"],
    "OPTIONS": s.DATABASES["default"].get("OPTIONS", {}),
    "LAYER": s.CHANNEL_LAYERS["default"]["BACKEND"],
    "MATCH_SWEEPER": s.MATCH_SWEEPER,
    "BROKER": s.CELERY_BROKER_URL,
    "DEAL_SEED": s.DEAL_SEED,
    "ALLOWED_HOSTS": s.ALLOWED_HOSTS,
    "LANGUAGE_CODE": s.LANGUAGE_CODE,
}))
"""


def load(**env: str) -> subprocess.CompletedProcess[str]:
    """Start a fresh interpreter (not under pytest) with only ``env`` set."""
    clean = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    clean.update(env, DJANGO_SETTINGS_MODULE="config.settings")
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=BASE_DIR,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(**env: str) -> dict[str, object]:
    result = load(**env)
    assert result.returncode == 0, result.stderr
    settings: dict[str, object] = json.loads(result.stdout)
    return settings


def refused(**env: str) -> str:
    result = load(**env)
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr
    return result.stderr


def test_nothing_set_gives_the_embedded_default() -> None:
    s = loaded()
    assert s["DEBUG"] is True
    assert s["ENGINE"] == "django.db.backends.sqlite3"
    assert s["LAYER"] == "channels.layers.InMemoryChannelLayer"
    assert s["MATCH_SWEEPER"] == "web"
    assert s["BROKER"] == "memory://"
    assert s["DEAL_SEED"] is None
    assert s["LANGUAGE_CODE"] == "ja"


def test_sqlite_takes_the_write_lock_at_the_start_of_each_transaction() -> None:
    options = loaded()["OPTIONS"]
    assert isinstance(options, dict)
    assert options["transaction_mode"] == "IMMEDIATE"
    assert options["timeout"] > 0


def test_redis_url_switches_on_the_redis_layer_and_celery_sweeper() -> None:
    s = loaded(REDIS_URL="redis://127.0.0.1:6379/3")
    assert s["LAYER"] == "channels_redis.core.RedisChannelLayer"
    assert s["MATCH_SWEEPER"] == "celery"
    assert s["BROKER"] == "redis://127.0.0.1:6379/3"


def test_database_url_selects_postgresql() -> None:
    s = loaded(DATABASE_URL="postgres://postgres@127.0.0.1:5432/spectacular")
    assert s["ENGINE"] == "django.db.backends.postgresql"


@pytest.mark.parametrize("value", ["maybe", "2", "yes please"])
def test_it_refuses_a_debug_value_that_is_not_yes_or_no(value: str) -> None:
    stderr = refused(DEBUG=value)
    assert f"DEBUG={value!r} is not a yes/no value" in stderr


def test_it_reads_the_usual_spellings_of_yes_and_no() -> None:
    assert loaded(DEBUG="False", SECRET_KEY="k" * 50, ALLOWED_HOSTS="example.org")["DEBUG"] is False
    assert loaded(DEBUG="on")["DEBUG"] is True


def test_it_requires_a_secret_key_when_debug_is_off() -> None:
    stderr = refused(DEBUG="false", ALLOWED_HOSTS="example.org")
    assert "SECRET_KEY must be set when DEBUG is false" in stderr


def test_it_requires_allowed_hosts_when_debug_is_off() -> None:
    stderr = refused(DEBUG="false", SECRET_KEY="k" * 50)
    assert "ALLOWED_HOSTS must be set" in stderr


def test_allowed_hosts_is_a_comma_separated_list() -> None:
    s = loaded(ALLOWED_HOSTS="a.example, b.example")
    assert s["ALLOWED_HOSTS"] == ["a.example", "b.example"]


def test_it_refuses_a_database_url_it_cannot_understand() -> None:
    stderr = refused(DATABASE_URL="nosuchdb://somewhere/x")
    assert "DATABASE_URL is not a usable database URL" in stderr


def test_it_refuses_a_deal_seed_that_is_not_a_number() -> None:
    stderr = refused(SB_DEAL_SEED="abc")
    assert "SB_DEAL_SEED='abc' is not a whole number" in stderr


def test_a_deal_seed_is_allowed_with_debug_on() -> None:
    assert loaded(SB_DEAL_SEED="42")["DEAL_SEED"] == 42


def test_a_deal_seed_is_refused_on_a_live_server() -> None:
    stderr = refused(
        SB_DEAL_SEED="42", DEBUG="false", SECRET_KEY="k" * 50, ALLOWED_HOSTS="example.org"
    )
    assert "SB_DEAL_SEED makes every deal predictable" in stderr


def test_celery_sweeper_need_redis() -> None:
    stderr = refused(MATCH_SWEEPER="celery")
    assert "MATCH_SWEEPER=celery needs REDIS_URL" in stderr


def test_it_refuses_an_unknown_timer_kind() -> None:
    stderr = refused(MATCH_SWEEPER="cron")
    assert "MATCH_SWEEPER='cron' must be one of: web, celery" in stderr
