# Two commands: `make run` (the platform with its worker) and `make test` (the whole suite).
# Everything else is reached through them; nothing needs to be installed first but python3.
VENV ?= .venv
PY := $(VENV)/bin/python
LOCKS := requirements/runtime.txt requirements/dev.txt
STAMP := $(VENV)/.installed-$(shell cat $(LOCKS) | sha1sum | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-smoke calibrate lint typecheck venv lock bench clean

# dev.txt is the complete lock (runtime + tools, every file hashed), so nothing is resolved here.
$(STAMP): $(LOCKS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet --require-hashes --no-deps -r requirements/dev.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

# Re-lock after editing requirements/*.in: pip-compile keeps every pin it can, so only what the
# edit needs moves. LOCK_ARGS="--upgrade-package NAME" (or "--upgrade") moves pins on purpose.
# pip-tools lives in its own venv so it never enters the locks it writes.
LOCK_VENV ?= var/lock-venv
PIP_TOOLS_VERSION ?= 7.6.2
LOCK_FLAGS := --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links

$(LOCK_VENV)/bin/pip-compile:
	python3 -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet pip-tools==$(PIP_TOOLS_VERSION)

lock: $(LOCK_VENV)/bin/pip-compile
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile $(LOCK_FLAGS) $(LOCK_ARGS) \
		--output-file requirements/runtime.txt requirements/runtime.in
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile $(LOCK_FLAGS) $(LOCK_ARGS) \
		--output-file requirements/dev.txt requirements/dev.in

# The local demo runs with DEBUG on (the settings default is off): the development key, the
# demo login, the simulator at /sim/v1 and judges on loopback. Production never sets it.
# The demo judge calls the simulator of the server this target starts, on $(PORT), unless
# SIMULATOR_BASE_URL is set (runstack derives the same URL when run on its own).
SIM_HOST := $(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST))
SIMULATOR_BASE_URL ?= http://$(SIM_HOST):$(PORT)/sim/v1
LOCAL_ENV := DEBUG=$${DEBUG:-1} SIMULATOR_BASE_URL=$(SIMULATOR_BASE_URL)

run: venv
	$(LOCAL_ENV) $(PY) manage.py migrate --noinput
	$(LOCAL_ENV) $(PY) manage.py seed_demo --if-empty
	$(LOCAL_ENV) $(PY) manage.py runstack --host $(HOST) --port $(PORT)

# The suite runs on whatever DATABASE_URL / REDIS_URL say (PostgreSQL + Redis in CI),
# and on the embedded default (SQLite + filesystem broker) when they are unset.
TEST_DATA_DIR ?= $(CURDIR)/var/test
# The whole suite runs in pytest-xdist processes, one more than the cores (the tests spend part
# of their time waiting on workers, browsers and servers), at most 12 (each takes a Redis
# database: tests/settings.py). A file stays on one process, so its module fixtures run once.
# A run narrowed with PYTEST_ARGS stays in one process unless TEST_WORKERS says otherwise.
TEST_WORKERS ?= $(if $(PYTEST_ARGS),0,$(shell n=$$(nproc); echo $$(( n < 12 ? n + 1 : 12 ))))
# lint and typecheck run beside the tests (mypy alone kept one core idle for 25 s); their
# output follows the tests', and either failing fails make test.
# The test processes keep their bytecode, pytest's assertion-rewritten test modules included, in
# var/pycache even where the environment says PYTHONDONTWRITEBYTECODE (as these machines do):
# otherwise each xdist process rewrote the asserts of ~430 modules (tests, conftests, pytest plugins)
# again: 14-23 s of collection instead of 6.
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/var/pycache
test: venv
	@mkdir -p var; $(MAKE) --no-print-directory lint typecheck > var/test-checks.log 2>&1 & checks=$$!; \
	$(PYTEST_ENV) DATA_DIR=$(TEST_DATA_DIR) $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS); tests=$$?; \
	wait $$checks; lint=$$?; cat var/test-checks.log; \
	[ $$lint -eq 0 ] || echo "make test: lint or typecheck failed (above)"; \
	[ $$tests -eq 0 ] && [ $$lint -eq 0 ]

# The calibration experiments (tests marked calibration: ~30,000 simulated judge calls through a
# real worker; tables in test-artifacts/calibration*.txt). make test runs their in-process checks.
calibrate: venv
	$(PYTEST_ENV) DATA_DIR=$(CURDIR)/var/test-calibrate $(PY) -m pytest --calibration -m calibration $(PYTEST_ARGS)

# The embedded-mode smoke part CI runs besides the full suite on PostgreSQL.
test-smoke: venv
	$(PYTEST_ENV) DATA_DIR=$(CURDIR)/var/test-smoke $(PY) -m pytest -m smoke $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy with the django-stubs plugin over the apps and the site (mypy.ini; cache in var/mypy).
typecheck: venv
	$(VENV)/bin/mypy

# Benchmarks measure production settings (DEBUG off, HTTPS redirect, Secure cookies): the crowd
# load benchmark's server sits behind a simulated TLS-terminating proxy (benchmarks/annotation_load.py).
# Only the judges may call the simulator on loopback. `make bench` fails when a target run misses.
BENCH_ENV := SECRET_KEY=$${SECRET_KEY:-bench-only-secret-key-not-for-deployment-0123456789} \
	JUDGE_ALLOWED_HOSTS=$${JUDGE_ALLOWED_HOSTS:-public-https,loopback} SIMULATOR_ENABLED=$${SIMULATOR_ENABLED:-1}

bench: venv
	$(BENCH_ENV) $(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) var
