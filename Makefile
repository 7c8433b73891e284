# One entry per task. Everything installs into .venv on first use.
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTHON ?= python3

.PHONY: run test lint fmt assets install bank-check db i18n-extract bench bench-load bench-cpu bench-weight bench-keypoints experiments experiments-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Front-end files are pinned in package.json / package-lock.json and served from our origin.
# Swagger UI for /api/v1/docs comes from the same pin, so the docs work under the CSP.
static/vendor/htmx.min.js: package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	mkdir -p static/vendor/swagger-ui
	cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js
	cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css \
	  node_modules/swagger-ui-dist/LICENSE static/vendor/swagger-ui/

assets: static/vendor/htmx.min.js

db: install
	$(BIN)/ringside db upgrade
	$(BIN)/ringside bank load

run: install assets db
	$(BIN)/ringside serve --host 127.0.0.1 --port 8000

bank-check: install
	$(BIN)/ringside bank check

lint: install
	$(BIN)/ruff check .

fmt: install
	$(BIN)/ruff check --fix .

# Runs on SQLite; the database tests also run on PostgreSQL when RINGSIDE_TEST_DATABASE_URL is set.
test: install assets lint bank-check
	$(BIN)/pytest

# UI strings: extract from app/ and templates/, then merge into each language's catalog.
i18n-extract: install
	$(BIN)/pybabel extract -F pyproject.toml -k _ -k N_ -k gettext -k ngettext:1,2 \
	  -k pgettext:1c,2 --no-location --sort-output -o app/i18n/messages.pot .
	for lang in fr tr zh; do \
	  $(BIN)/pybabel update -i app/i18n/messages.pot -d app/i18n/locale -l $$lang -D messages \
	    --no-fuzzy-matching --ignore-obsolete; done

# Recorded gloo experiments: torch 2.13.0 (CPU) in a venv of its own.
EXP := .venv-experiments
$(EXP)/.installed: pyproject.toml
	test -x $(EXP)/bin/python || $(PYTHON) -m venv $(EXP)
	$(EXP)/bin/pip install --quiet --upgrade pip
	$(EXP)/bin/pip install --quiet -e '.[experiments]'
	touch $@

experiments: $(EXP)/.installed
	$(EXP)/bin/python question_bank/experiments/run_all.py

# Fresh runs compared with the recordings (timestamps and timings aside); CI runs it.
experiments-check: $(EXP)/.installed
	$(EXP)/bin/python question_bank/experiments/run_all.py --check

# On demand: figures, not pass/fail (needs wrk: apt-get install wrk).
bench: install assets
	$(BIN)/python bench/bench_pages.py

# Locust at 50 and 200 users: SQLite/1 worker, then PostgreSQL/4 workers (local server).
bench-load: install assets
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	$(BIN)/python bench/bench_load.py

# Server CPU per request, page by page (one worker, sequential requests; Linux /proc).
bench-cpu: install assets
	$(BIN)/python bench/cpu_per_request.py

# Bytes on the wire for a question page and everything it loads.
bench-weight: install assets
	$(BIN)/python bench/page_weight.py

# Precision and recall of the key points pre-ticked on open answers (paraphrase set).
bench-keypoints: install
	$(BIN)/python bench/keypoints.py

clean:
	rm -rf $(VENV) $(EXP) node_modules static/vendor .pytest_cache .ruff_cache .hypothesis
