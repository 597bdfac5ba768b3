# One command to set up and run the server, one to set up and run the tests.
# Both create .venv on first use (and again whenever pyproject.toml changes): `run` installs
# only what serving needs, `test` (and `bench`) add the test tools.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.test-installed-stamp
CHROMIUM ?= /usr/bin/chromium
NGINX ?= /usr/sbin/nginx

.PHONY: run test bench
run: $(STAMP)
	$(VENV)/bin/solitaire-race serve $(ARGS)

test: $(TEST_STAMP) $(CHROMIUM) $(NGINX)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m tests.browser.axe_core  # the browser tests' accessibility checker, from the npm registry
	CHROMIUM=$(CHROMIUM) $(VENV)/bin/python -m pytest -n 2 $(PYTEST_ARGS)

bench: $(TEST_STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

# The browser tests (tests/browser/) drive Debian's Chromium through Playwright; Playwright's
# own browser downloads are not used. Installed here when missing (as root, or with sudo).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y chromium fonts-dejavu-core

# The cluster tests run the cluster profile's reverse proxy (deploy/nginx-cluster.conf).
$(NGINX):
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y nginx-light

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,lint]'
	touch $(TEST_STAMP)
