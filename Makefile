# One entry per task. Everything installs into .venv on first use.
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTHON ?= python3

.PHONY: run test test-sqlite test-pg lint fmt assets install bank-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Front-end files are pinned in package.json / package-lock.json and served from our origin.
static/vendor/htmx.min.js: package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	mkdir -p static/vendor
	cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js

assets: static/vendor/htmx.min.js

run: install assets
	$(BIN)/ringside serve --host 127.0.0.1 --port 8000

lint: install
	$(BIN)/ruff check .

fmt: install
	$(BIN)/ruff check --fix .

test: install assets lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) node_modules static/vendor .pytest_cache .ruff_cache .hypothesis
