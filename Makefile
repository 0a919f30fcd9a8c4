# Every target creates .venv and installs what it needs on first use.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# `make test` runs against this machine's PostgreSQL and Redis unless told otherwise.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/spectacular
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

# `make run-services` defaults: the local PostgreSQL and Redis.
SERVICES_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/spectacular
SERVICES_REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: run run-services test check bench bench-live bench-load demo fmt messages

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# The embedded default: SQLite, in-memory channel layer, in-process timers.
# HOST and PORT from the environment, default 127.0.0.1:8000.
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	@echo "Spectacular Bid is running on http://$${HOST:-127.0.0.1}:$${PORT:-8000}"
	$(VENV)/bin/daphne -b "$${HOST:-127.0.0.1}" -p "$${PORT:-8000}" config.asgi:application

# Production-shaped: PostgreSQL + Redis, Daphne, a Celery worker and beat (Procfile, honcho).
# DATABASE_URL and REDIS_URL from the environment, else this machine's services.
run-services: export DATABASE_URL := $(or $(DATABASE_URL),$(SERVICES_DATABASE_URL))
run-services: export REDIS_URL := $(or $(REDIS_URL),$(SERVICES_REDIS_URL))
run-services: export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
run-services: $(STAMP)
	honcho start release
	@echo "Spectacular Bid is running on http://$${HOST:-127.0.0.1}:$${PORT:-8000} (PostgreSQL + Redis + Celery)"
	honcho start web worker beat

check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict engine

test: $(STAMP)
	bash scripts/ensure-chromium.sh
	$(MAKE) check
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" TEST_REDIS_URL="$(TEST_REDIS_URL)" \
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m engine.bench

# The live platform's figures (a real Daphne, PostgreSQL + Redis + Celery too):
# move round trip, backstop lateness, ranked pairing time. Prints; asserts nothing.
bench-live: $(STAMP)
	$(PY) tests/matches/measure_roundtrip.py
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" $(PY) tests/queue/measure_pairing.py

# The load generator (loadtest/): bots speaking docs/protocol.md against the embedded
# default and the services set-up, each started as an operator would; prints a
# table per set-up and writes var/bench-load.json. Options: ARGS="--help".
bench-load: $(STAMP)
	$(PY) -m loadtest $(ARGS)

demo: $(STAMP)
	$(PY) -m engine.demo

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# After changing UI text: collect the strings into locale/*/django.po, fill the ja
# entries from any TRANSLATIONS_*ja*.txt hand-over lists, translate what is left
# in the ja .po by hand, and compile the .mo files. Commit the .po and .mo (needs
# gettext: apt-get install gettext).
messages: $(STAMP)
	$(PY) manage.py makemessages -l ja -l en --ignore=.venv --ignore=engine --ignore=tests --ignore=staticfiles
	$(PY) scripts/merge_translations.py
	$(PY) manage.py compilemessages --ignore=.venv
