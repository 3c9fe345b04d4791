# The two set-up commands of the README:  make run  and  make test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test demo lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

## Install, build the demo database on first start, open the dashboard.
run: $(VENV)/.runtime
	$(BIN)/streamlit run app.py --browser.gatherUsageStats false

## Install the test dependencies and run the whole test suite.
test: $(VENV)/.dev
	$(BIN)/python -m pytest -q

## Rebuild the demo database explicitly.
demo: $(VENV)/.runtime
	$(BIN)/python cli.py demo --force

lint: $(VENV)/.dev
	$(BIN)/ruff check .

bench: $(VENV)/.dev
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/ingest.py
