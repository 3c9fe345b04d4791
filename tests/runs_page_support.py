"""What the Runs page tests share: a writable store for the page, opening the page under AppTest,
picking a widget by its label, and waiting for a run.

- The ``runs_page_db`` fixture: a writable copy of the page fixtures' small demo store
  (``pages_demo_db``, with the demo's own published runs) that the dashboard reads
  (``ENEM_DB``); its runs folder is ``runs_page_db.parent / "runs"``. tests/conftest.py
  registers this module as a plugin, so a test names it without an import.
- :func:`open_runs`: the Runs page opened in AppTest, checked clean
  (:func:`tests.page_support.assert_clean`) and titled.
- :func:`labelled`: the one widget of a kind with a given label.
- :func:`wait_for`: poll a condition (a run ending, say) until it holds or time is up.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from store.layout import copy_store
from tests.page_support import ROOT, RUNS, TIMEOUT, assert_clean


@pytest.fixture
def runs_page_db(monkeypatch, tmp_path, pages_demo_db) -> Path:
    """A writable copy of the small demo (with the demo's own published runs)."""
    target = tmp_path / "store" / "runs_page.duckdb"
    target.parent.mkdir()
    copy_store(pages_demo_db, target)
    monkeypatch.setenv("ENEM_DB", str(target))
    return target


def open_runs() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.switch_page(RUNS).run()
    assert_clean(app)
    assert app.title[0].value == "Model runs"
    return app


def labelled(widgets, label: str):
    [widget] = [w for w in widgets if w.label == label]
    return widget


def wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.2)
