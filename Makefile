# One command runs every check: `make check` (lint, format, types, layer contract, tests).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install check lint types layers test golden-update

install:
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'

lint:
	$(BIN)ruff check .
	$(BIN)ruff format --check .

types:
	$(BIN)mypy

layers:
	$(BIN)lint-imports

test:
	$(PY) -m pytest

check: lint types layers test

golden-update:
	GITFLEET_UPDATE_GOLDEN=1 $(PY) -m pytest tests/golden -q
