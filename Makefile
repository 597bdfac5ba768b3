# One command to set up and run the server, one to set up and run the tests.
# Both create .venv on first use (and again whenever pyproject.toml changes).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test bench
run: $(STAMP)
	$(VENV)/bin/solitaire-race serve $(ARGS)

test: $(STAMP)
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/leaderboard.py

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)
