"""Databases for the dashboard tests, built once per test session.

- ``pages_demo_db``: a small synthetic demo year (5,000 candidates), built exactly like the
  shipped demo (generator, ingest, the demo's own model runs such as the random baseline).
- ``pages_no_runs_db``: a copy of it with every model table emptied.
- ``pages_models_db``: a copy of it with synthetic TEST model runs added
  (``testbed/fake_runs.py``) next to the demo's own runs.
- ``pages_empty_db``: a database with the schema and no rows.
Treat them as read-only. ``models_db``, ``no_runs_db`` and ``empty_db`` make the dashboard
(and AppTest) read the matching database for one test (``ENEM_DB``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store.connection import writing
from store.layout import copy_store
from store.schema import ensure_schema
from testbed.fake_runs import copy_with_test_runs
from workflows.demo_build import build_demo_database

PAGES_EXAMINEES = 5000


@pytest.fixture(scope="session")
def pages_demo_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages_demo")
    path = folder / "demo.duckdb"
    build_demo_database(path, n_examinees=PAGES_EXAMINEES, seed=2023, files_dir=folder / "files",
                        progress=False)
    return path


@pytest.fixture(scope="session")
def pages_no_runs_db(tmp_path_factory, pages_demo_db) -> Path:
    target = tmp_path_factory.mktemp("pages_no_runs") / "no_runs.duckdb"
    copy_store(pages_demo_db, target)
    with writing(target) as con:
        for table in ("model_responses", "model_scores", "model_runs", "models", "min_k_prob"):
            con.execute(f"DELETE FROM {table}")
    return target


@pytest.fixture(scope="session")
def pages_models_db(tmp_path_factory, pages_demo_db) -> Path:
    target = tmp_path_factory.mktemp("pages_models") / "models.duckdb"
    return copy_with_test_runs(pages_demo_db, target)


@pytest.fixture(scope="session")
def pages_empty_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pages_empty") / "empty.duckdb"
    with writing(path) as con:
        ensure_schema(con)
    return path


@pytest.fixture
def models_db(monkeypatch, pages_models_db) -> Path:
    """The dashboard reads ``pages_models_db`` for this test."""
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    return pages_models_db


@pytest.fixture
def no_runs_db(monkeypatch, pages_no_runs_db) -> Path:
    """The dashboard reads ``pages_no_runs_db`` for this test."""
    monkeypatch.setenv("ENEM_DB", str(pages_no_runs_db))
    return pages_no_runs_db


@pytest.fixture
def empty_db(monkeypatch, pages_empty_db) -> Path:
    """The dashboard reads ``pages_empty_db`` for this test."""
    monkeypatch.setenv("ENEM_DB", str(pages_empty_db))
    return pages_empty_db
