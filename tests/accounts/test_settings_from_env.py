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
    "SECRET_KEY_FILE",
    "TRUSTED_PROXY_COUNT",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_COOKIES",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "GC_THRESHOLD",
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
    "SECRET_KEY": s.SECRET_KEY,
    "GC_THRESHOLD": s.GC_THRESHOLD,
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
    assert s["DEBUG"] is False
    assert s["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]
    assert s["ENGINE"] == "django.db.backends.sqlite3"
    assert s["LAYER"] == "matches.realtime.layers.InMemoryLayer"
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
    assert s["LAYER"] == "matches.realtime.layers.RedisPubSubLayer"
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
    assert loaded(DEBUG="False")["DEBUG"] is False
    assert loaded(DEBUG="on")["DEBUG"] is True
    assert loaded(DEBUG="1")["DEBUG"] is True


def test_a_secret_key_from_the_environment_is_used_as_given(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    s = loaded(SECRET_KEY="k" * 50, SECRET_KEY_FILE=str(key_file))
    assert s["SECRET_KEY"] == "k" * 50
    assert not key_file.exists()


def test_without_one_a_private_secret_key_is_made_once_and_kept(tmp_path: Path) -> None:
    key_file = tmp_path / "var" / "secret_key"
    first = loaded(SECRET_KEY_FILE=str(key_file))["SECRET_KEY"]
    assert isinstance(first, str) and len(first) >= 50 and len(set(first)) >= 5
    assert key_file.read_text().strip() == first
    assert key_file.stat().st_mode & 0o777 == 0o600  # only its owner can read it
    assert loaded(SECRET_KEY_FILE=str(key_file))["SECRET_KEY"] == first  # a restart keeps it
    assert [p.name for p in key_file.parent.iterdir()] == ["secret_key"]  # no temp file left


def test_the_made_key_is_not_the_old_public_development_key(tmp_path: Path) -> None:
    a = loaded(SECRET_KEY_FILE=str(tmp_path / "a"))["SECRET_KEY"]
    b = loaded(SECRET_KEY_FILE=str(tmp_path / "b"))["SECRET_KEY"]
    assert a != b  # random per machine, never a key printed in the repository
    assert "dev-only" not in str(a)


def test_processes_starting_at_once_agree_on_the_made_key(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", SECRET_KEY_FILE=str(key_file))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SHOW], cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    keys = {json.loads(proc.communicate(timeout=60)[0])["SECRET_KEY"] for proc in procs}
    assert keys == {key_file.read_text().strip()}


def test_an_unreadable_key_file_stops_start_up(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.mkdir()  # a folder where the file should be
    stderr = refused(SECRET_KEY_FILE=str(key_file))
    assert "Cannot read the secret key file" in stderr


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
    assert loaded(SB_DEAL_SEED="42", DEBUG="true")["DEAL_SEED"] == 42


@pytest.mark.parametrize("debug", ["", "false"])
def test_a_deal_seed_is_refused_on_a_live_server(debug: str) -> None:
    stderr = refused(SB_DEAL_SEED="42", DEBUG=debug)
    assert "SB_DEAL_SEED makes every deal predictable" in stderr


def test_celery_sweeper_need_redis() -> None:
    stderr = refused(MATCH_SWEEPER="celery")
    assert "MATCH_SWEEPER=celery needs REDIS_URL" in stderr


def test_the_garbage_collector_is_spaced_out_unless_told_otherwise() -> None:
    assert loaded()["GC_THRESHOLD"] == [20_000, 20, 10]
    assert loaded(GC_THRESHOLD="5000, 10, 10")["GC_THRESHOLD"] == [5000, 10, 10]
    assert loaded(GC_THRESHOLD="python")["GC_THRESHOLD"] is None


@pytest.mark.parametrize("value", ["20000,20", "a,b,c", "0,10,10", "-1,10,10"])
def test_it_refuses_thresholds_it_cannot_use(value: str) -> None:
    assert "is not three positive whole numbers" in refused(GC_THRESHOLD=value)


def test_a_web_process_freezes_its_start_up_and_collects_less_often() -> None:
    """What ``python -m config.serve`` does before it serves (config.serve.tune_gc)."""
    code = (
        "import gc, json; from config.serve import tune_gc; "
        "before = gc.get_threshold(); tune_gc(None); same = gc.get_threshold(); "
        "tune_gc((20000, 20, 10)); "
        "print(json.dumps([before, same, gc.get_threshold(), gc.get_freeze_count()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    before, same, after, frozen = json.loads(out.stdout)
    assert same == before == [700, 10, 10]  # None: the interpreter's own
    assert after == [20000, 20, 10]
    assert frozen > 1000  # start-up's objects are out of the collector's way


def test_it_refuses_an_unknown_timer_kind() -> None:
    stderr = refused(MATCH_SWEEPER="cron")
    assert "MATCH_SWEEPER='cron' must be one of: web, celery" in stderr


# What README's "real deployment" paragraph tells an operator to set.
DEPLOYMENT = {
    "SECRET_KEY": "x7-Vq2" * 10,
    "ALLOWED_HOSTS": "play.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://play.example.org",
    "SECURE_COOKIES": "true",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "3600",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SECURE_PROXY_SSL_HEADER": "true",
}


def check_deploy(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    clean.update(env, DJANGO_SETTINGS_MODULE="config.settings")
    clean.setdefault("SECRET_KEY_FILE", str(tmp_path / "secret_key"))
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_documented_variables(tmp_path: Path) -> None:
    result = check_deploy(tmp_path, **DEPLOYMENT)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_is_clean_with_the_generated_secret_key(tmp_path: Path) -> None:
    env = {k: v for k, v in DEPLOYMENT.items() if k != "SECRET_KEY"}
    result = check_deploy(tmp_path, **env)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "warning"),
    [
        ("DEBUG", "true", "security.W018"),
        ("SECURE_COOKIES", "false", "security.W012"),
        ("SECURE_HSTS_SECONDS", "0", "security.W004"),
        ("SECRET_KEY", "short", "security.W009"),
    ],
)
def test_check_deploy_names_what_is_missing(
    tmp_path: Path, variable: str, value: str, warning: str
) -> None:
    result = check_deploy(tmp_path, **{**DEPLOYMENT, variable: value})
    assert result.returncode != 0
    assert warning in result.stderr
