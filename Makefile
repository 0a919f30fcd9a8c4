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

.PHONY: run dev run-services test check bench bench-bots bench-live bench-load bench-arena drill demo fmt messages

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Where `make run` and `make run-services` listen (HOST and PORT from the environment).
SERVE_HOST := $(or $(HOST),127.0.0.1)
SERVE_PORT := $(or $(PORT),8000)

# The embedded default: SQLite, in-memory channel layer, the deadline sweeper in the
# one web process. DEBUG stays off (settings' default); the secret key is made on
# first run in var/.
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) scripts/compile_bytecode.py
	@echo "Spectacular Bid is running on http://$(SERVE_HOST):$(SERVE_PORT)"
	$(PY) -m config.serve --host $(SERVE_HOST) --port $(SERVE_PORT)

# The same with DEBUG on (Django's error pages with tracebacks) and reloading on
# code changes: for development only, never where others can reach it.
dev: export DEBUG := true
dev: $(STAMP)
	$(PY) manage.py migrate --noinput
	@echo "Spectacular Bid (DEBUG on) is running on http://127.0.0.1:8000"
	$(PY) manage.py runserver 127.0.0.1:8000

# Production-shaped: PostgreSQL + Redis, two Daphne processes behind HAProxy (installed
# from Debian if missing), a Celery worker (with the deadline sweeper) and beat
# (Procfile, honcho). DATABASE_URL and REDIS_URL from the environment, else this
# machine's services. HAProxy listens on HOST:PORT; the web processes on PORT+1, PORT+2.
run-services: export DATABASE_URL := $(or $(DATABASE_URL),$(SERVICES_DATABASE_URL))
run-services: export REDIS_URL := $(or $(REDIS_URL),$(SERVICES_REDIS_URL))
run-services: export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
run-services: export SB_HOST := $(SERVE_HOST)
run-services: export SB_PORT := $(SERVE_PORT)
run-services: export WEB1_PORT := $(shell echo $$(($(SERVE_PORT) + 1)))
run-services: export WEB2_PORT := $(shell echo $$(($(SERVE_PORT) + 2)))
run-services: $(STAMP)
	bash scripts/ensure-programs.sh services
	honcho start release
	@echo "Spectacular Bid is running on http://$(SERVE_HOST):$(SERVE_PORT) (2 web processes, PostgreSQL + Redis + Celery)"
	honcho start web1 web2 proxy worker beat

check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict engine bots table
	$(VENV)/bin/lint-imports --no-cache

test: $(STAMP)
	bash scripts/ensure-programs.sh test
	bash scripts/ensure-node-tools.sh
	$(MAKE) check
	$(PY) scripts/compile_bytecode.py
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" TEST_REDIS_URL="$(TEST_REDIS_URL)" \
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m engine.bench
	@echo
	$(PY) -m bots.bench --timing

# The computer player's strength: level 2 vs 1 and level 3 vs 2, 200 matches
# each on every core (BOTS_BENCH_MATCHES=20 for a quick run). Prints; asserts nothing.
bench-bots: $(STAMP)
	$(PY) -m bots.bench

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

# One arena of 500 bots (tournaments/bench.py, then loadtest/arena.py): the pairing
# pass's time at 500 players (in-process, on BENCH_ARENA_DATABASE_URL, default a
# scratch SQLite file; a PostgreSQL URL must name a scratch database), then a live
# arena on the embedded default: standings pushes per socket, move latency with and
# without the arena. Prints; asserts nothing. ARGS="--players 40 --seconds 30": smaller.
BENCH_ARENA_DATABASE_URL ?= sqlite:///$(CURDIR)/var/bench-arena.sqlite3
bench-arena: $(STAMP)
	mkdir -p var
	DATABASE_URL="$(BENCH_ARENA_DATABASE_URL)" $(PY) -m tournaments.bench
	$(PY) -m loadtest.arena $(ARGS)

# The fault drill (loadtest/drill.py): the services set-up's processes started one by
# one on their own database and Redis db, bots playing through HAProxy while each
# kind of process is sent SIGTERM, then SIGKILL, and started again; prints a row per
# fault (moves lost, ms charged, voids, sockets back) and writes var/drill.json.
# Exits 1 if a fault broke a promise. Options: ARGS="--help".
drill: $(STAMP)
	$(PY) -m loadtest.drill $(ARGS)

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
