# SPDX-License-Identifier: GPL-2.0-only
# make run   : install into .venv (first time ~3 min: cppyy compiles), build the C++ models, run the main scenario
#              (scenarios/testbed_188_allgather.py: 4 KiB..1 MiB per rank, under a minute on two cores;
#              make run ARGS=--full for the paper's whole range to 8 MiB, ~8 min)
# make test  : install into .venv, run the whole test suite
# make lint  : install the dev extra, check style and types: ruff check, ruff format --check,
#              clang-format (ns3_modules/), mypy (mcsim/)
# make format: install the dev extra, reformat: ruff format, clang-format -i (ns3_modules/)
# make docs  : install the docs extra, build the documentation site from docs/ into build/docs/ (Sphinx, MyST,
#              numpydoc), warnings as errors; open build/docs/index.html
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MAIN_SCENARIO ?= scenarios/testbed_188_allgather.py
ARGS ?=
CXX_SOURCES := $(sort $(shell find mcsim/ns3_modules -name '*.cc' -o -name '*.h'))

.PHONY: run test lint format docs install clean
run: $(VENV)/.installed
	$(BIN)/mcsim run $(MAIN_SCENARIO) $(ARGS)

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/clang-format --dry-run -Werror $(CXX_SOURCES)
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/clang-format -i $(CXX_SOURCES)

docs: $(VENV)/.installed-docs
	rm -rf build/docs
	$(BIN)/python -m sphinx -W --keep-going -E -q -b html docs build/docs

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "mcsim needs Python >= 3.11; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
