# The two commands a newcomer runs:  `make demo`  and  `make test`.
# Both create .venv on first use and install the project and its QA lab (lab/) into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench browser

$(VENV)/.installed: pyproject.toml lab/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e ./lab
	touch $@

demo: $(VENV)/.installed
	$(BIN)/graphctx demo

# pytest imports every test folder's files as top-level modules (there is no __init__.py), so
# each folder's conftest.py is a module named "conftest": mypy checks one folder per run.
TYPED_TEST_ROOTS = tests/conftest.py $(filter-out tests/__pycache__/,$(wildcard tests/*/))

lint: $(VENV)/.installed
	$(BIN)/ruff check src lab tests tools
	$(BIN)/ruff format --check src lab tests tools
	$(BIN)/mypy
	@for root in $(TYPED_TEST_ROOTS); do echo "mypy $$root"; $(BIN)/mypy $$root || exit 1; done

# Debian's Chromium for the evidence explorer's browser tests (tests never download a browser).
# Installed with apt when missing; where that is impossible the browser tests skip, except
# under CI=true, where they fail.
CHROMIUM ?= /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  echo "installing Debian's chromium (for tests/e2e)"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
	  || echo "could not install chromium: the browser tests will skip (fail under CI=true)"; }

test: lint browser
	$(BIN)/pytest

bench: $(VENV)/.installed
	$(BIN)/graphctx bench --out bench-results
