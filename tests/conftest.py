"""Shared fixtures: small generated INEP-format years and databases built from them."""

from __future__ import annotations

import builtins
import functools
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from demo import generate_demo_files
from store.connection import connected
from store.layout import copy_store
from store.question_texts import load_question_texts
from tests.disk_support import small_disk  # noqa: F401 - a fixture for every test
from workflows.ingest import ingest_items, ingest_year

SMALL_N = 3000
#: Real public files (INEP item files, the paper's results and exam texts); see its README.
REAL_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "real"
REAL_YEARS = (2019, 2020, 2021, 2022)

# Page tests' session fixtures live in their own module; registering it here builds each of
# their databases once per session instead of once per importing module. The Chromium tests'
# fixtures (browser, page, server, browser_page) are registered the same way, and so are the
# fixtures several test modules share: the paper's store (paper_db), the local OpenAI-API
# servers (openai_server, chat_endpoint) and the Runs page's store (runs_page_db). A test module
# never imports from another one: what they share lives in these modules and the *_support ones.
pytest_plugins = ["tests.page_db_support", "tests.browser_support", "tests.paper_db_support",
                  "tests.openai_support", "tests.runs_page_support"]


#: What marks a test, by the calls its code makes (its own body, the fixtures it uses and the
#: module-level helpers those call, followed through every module): ``pytest -m "not browser and
#: not model"`` is then the minute-scale inner loop without anyone remembering to mark a test.
MARKER_CALLS = {
    "browser": ("sync_playwright(", "require_browser(", "chromium.launch("),
    "apptest": ("AppTest.", "capture_page(", "capture_pages("),
    "model": ("build_tiny_model(", "from_pretrained(", "TransformersScorer("),
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_TESTS = Path(__file__).resolve().parent


@functools.cache
def _own_code(function: Callable) -> tuple[str, tuple[Callable, ...]]:
    """A test-suite function's source and the test-suite functions it names (read in its own
    module); empty for anything defined outside tests/ (the project's own code is not read)."""
    if _TESTS not in Path(inspect.getfile(function)).resolve().parents:
        return "", ()
    try:
        text = inspect.getsource(function)
    except (OSError, TypeError):
        return "", ()
    names = function.__globals__
    named = (names[name] for name in set(_NAME.findall(text))
             if name in names and not hasattr(builtins, name))
    return text, tuple(inspect.unwrap(f) for f in named if inspect.isfunction(f))


def _code_reached(start: list[Callable]) -> str:
    """The source of the test-suite functions in ``start`` and of those they name,
    transitively, joined."""
    seen: set[Callable] = set()
    texts: list[str] = []
    pending = [inspect.unwrap(f) for f in start if inspect.isfunction(f)]
    while pending:
        function = pending.pop()
        if function in seen:
            continue
        seen.add(function)
        text, named = _own_code(function)
        texts.append(text)
        pending.extend(named)
    return "\n".join(texts)


#: Rough seconds of one test of each kind on a 2-core machine (measured: Chromium tests 15–40 s,
#: AppTest runs 2.5–5 s, a test that starts processes a few seconds, the rest under one),
#: used only to start the longest modules first.
COST_SECONDS = {"browser": 20.0, "model": 5.0, "apptest": 3.0, "processes": 3.0}
PROCESS_CALLS = ("subprocess.run(", "subprocess.Popen(", "enem_llm(", "start_attached(",
                 "start_detached(", "serving(")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``browser``, ``apptest`` and/or ``model`` from the code it reaches, then
    put the modules in order of their rough cost, longest first (each module keeps its own
    order). ``make test`` runs whole modules in parallel processes (pytest-xdist's
    ``loadfile``), handed out in this order: the long ones start at once instead of ending
    the run alone."""
    cost: dict[str, float] = {}
    for item in items:
        function = getattr(item, "function", None)
        module = item.nodeid.split("::", 1)[0]
        if function is None:
            cost[module] = cost.get(module, 0.0) + 0.5
            continue
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        fixtures = [defs[-1].func for defs in definitions.values() if defs]
        code = _code_reached([function, *fixtures])
        for marker, calls in MARKER_CALLS.items():
            if any(call in code for call in calls):
                item.add_marker(marker)
        if item.get_closest_marker("slow"):  # a real small model (pyproject's marker list)
            item.add_marker("model")
        kinds = [name for name in MARKER_CALLS if item.get_closest_marker(name)]
        if any(call in code for call in PROCESS_CALLS):
            kinds.append("processes")
        cost[module] = cost.get(module, 0.0) + max([0.5] + [COST_SECONDS[k] for k in kinds])
    first_seen = {module: index for index, module in
                  reversed(list(enumerate(item.nodeid.split("::", 1)[0] for item in items)))}
    items.sort(key=lambda item: (-cost[item.nodeid.split("::", 1)[0]],
                                 first_seen[item.nodeid.split("::", 1)[0]]))


@pytest.fixture(scope="session")
def demo_files_2023(tmp_path_factory):
    return generate_demo_files(tmp_path_factory.mktemp("demo2023"), year=2023,
                               n_examinees=SMALL_N, seed=7, progress=False)


@pytest.fixture(scope="session")
def demo_files_2019(tmp_path_factory):
    return generate_demo_files(tmp_path_factory.mktemp("demo2019"), year=2019,
                               n_examinees=SMALL_N, seed=11, progress=False)


@pytest.fixture(scope="session")
def demo_files_2024(tmp_path_factory):
    return generate_demo_files(tmp_path_factory.mktemp("demo2024"), year=2024,
                               n_examinees=SMALL_N, seed=13, progress=False)


@pytest.fixture(scope="session")
def ingested_2023(tmp_path_factory, demo_files_2023):
    """A database with the small 2023 demo year ingested (treat as read-only)."""
    db = tmp_path_factory.mktemp("db") / "enem.duckdb"
    summary = ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items,
                          progress=False, source="demo", is_synthetic=True)
    return db, summary


@pytest.fixture()
def demo_db(tmp_path, ingested_2023, demo_files_2023):
    """A writable copy of the small 2023 year with its question texts (for model runs)."""
    db = tmp_path / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    with connected(db) as con:
        load_question_texts(con, demo_files_2023.questions)
    return db


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The shared folder of real public files; tests that need it say so when it is absent."""
    if not REAL_DATA.is_dir():
        pytest.skip(f"skipped: the real public files are not at {REAL_DATA} (CI has them)")
    return REAL_DATA


@pytest.fixture(scope="session")
def real_items_db(tmp_path_factory, real_data) -> Path:
    """A store holding only the real item files of 2019–2022 (items-only ingests).

    Session-wide and shared: copy it (``shutil.copy``) before writing to it.
    """
    path = tmp_path_factory.mktemp("real_items") / "real.duckdb"
    for year in REAL_YEARS:
        ingest_items(path, year, real_data / "items" / f"ITENS_PROVA_{year}.csv")
    return path


@pytest.fixture
def as_operator(monkeypatch):
    """Make AppTest's sessions the operator's. AppTest has no browser request (no Host, no
    Origin), so ``dashboard.access`` rightly makes it a viewer; the rule itself is tested on
    its own and in a real browser (tests/test_operator_config.py, tests/test_serving_safely.py).
    """
    from dashboard.access import Access

    monkeypatch.setattr("dashboard.access.session_access", lambda config=None: Access(True))
