# The two commands of the README. Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: plan test lint typecheck

$(BIN)/mlcc: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

plan: $(BIN)/mlcc
	$(BIN)/mlcc plan --stack $(STACK)

lint: $(BIN)/mlcc
	$(BIN)/ruff check mlcc tests images benchmarks __main__.py
	$(BIN)/ruff format --check mlcc tests images benchmarks __main__.py

typecheck: $(BIN)/mlcc
	$(BIN)/mypy
	$(BIN)/mypy --strict images/serve/serve.py benchmarks

test: lint typecheck
	$(BIN)/python -m pytest
