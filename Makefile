# SPDX-License-Identifier: GPL-2.0-only
# make run   : install into .venv (first time ~3 min: cppyy compiles), build the C++ models, run the main scenario
# make test  : install into .venv, run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MAIN_SCENARIO ?= scenarios/testbed_188_allgather.py

.PHONY: run test install clean
run: $(VENV)/.installed
	$(BIN)/mcsim run $(MAIN_SCENARIO)

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "mcsim needs Python >= 3.11; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
