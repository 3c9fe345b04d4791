"""Readers never wait on a writer, with real processes: a real Streamlit server keeps serving
pages to headless Chromium while an `enem-llm ingest-enem` process writes a new year into the
same store, and a model run that has to publish meanwhile waits its turn with a message."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from demo import generate_demo_files
from store.layout import copy_store
from tests.browser_support import PAGE_TIMEOUT_MS
from tests.browser_support import serving as _serving
from tests.browser_support import tall_page as _new_page
from tests.browser_support import wait_until_rendered as _wait_until_rendered

ROOT = Path(__file__).resolve().parent.parent
#: Enough candidates that the ingest outlasts several page loads on a 2-core machine.
BIG_YEAR_EXAMINEES = 2 * 300_000  # the ingest must outlast a few page loads
#: Pages loaded in turn while the ingest runs: (URL path, charts expected).
LOOP_PAGES = (("", 1), ("Accuracy_vs_ability", 1), ("Person_fit", 2), ("Data", 0))


@pytest.fixture(scope="module")
def big_year(tmp_path_factory):
    return generate_demo_files(tmp_path_factory.mktemp("big2019"), year=2019,
                               n_examinees=BIG_YEAR_EXAMINEES, seed=5, progress=False)


def _cli(*words: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli", *words], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_writing(store: Path, writer: subprocess.Popen) -> None:
    """Return once ``writer`` has started writing the store (its copy, or DuckDB's
    write-ahead log when a writer opens the live file itself)."""
    signs = (store.with_name(store.name + ".next"), store.with_name(store.name + ".wal"))
    while not any(sign.exists() for sign in signs):
        assert writer.poll() is None, writer.communicate()[1]
        time.sleep(0.02)


def _page_is_clean(page) -> bool:
    return (page.locator('[data-testid="stException"]').count() == 0
            and page.locator('[data-testid="stAlertContentError"]').count() == 0
            and "lock" not in page.locator('[data-testid="stMain"]').inner_text().lower())


def test_pages_keep_serving_during_an_ingest_and_then_show_the_new_year(
        tmp_path, pages_models_db, big_year, browser):
    store = tmp_path / "store.duckdb"
    copy_store(pages_models_db, store)
    with _serving(store, "streamlit-during-ingest.log") as base:
        page = _new_page(browser)
        page.goto(base, timeout=PAGE_TIMEOUT_MS)
        _wait_until_rendered(page, 1)
        ingest = _cli("ingest-enem", "--db", str(store), "--year", "2019", "--quiet",
                      "--microdata", str(big_year.microdata), "--items", str(big_year.items))
        _wait_for_writing(store, ingest)
        during, loads, failures = 0, 0, []
        while True:
            path, charts = LOOP_PAGES[loads % len(LOOP_PAGES)]
            page.goto(f"{base}/{path}?year=2023", timeout=PAGE_TIMEOUT_MS)
            _wait_until_rendered(page, charts)
            loads += 1
            if not _page_is_clean(page):
                failures.append(path)
            if ingest.poll() is not None:
                break
            during += 1  # this load began and ended while the ingest was writing
        _, err = ingest.communicate()
        assert ingest.returncode == 0, err
        assert failures == []
        assert during >= 2, f"only {during} page loads completed while the ingest wrote"
        page.goto(f"{base}/Data?year=2019", timeout=PAGE_TIMEOUT_MS)
        _wait_until_rendered(page, 0)
        assert _page_is_clean(page)
        assert "Booklets of 2019" in page.locator('[data-testid="stMain"]').inner_text()
        page.close()


def test_a_run_publishing_during_an_ingest_waits_its_turn(tmp_path, pages_models_db, big_year):
    store = tmp_path / "store.duckdb"
    copy_store(pages_models_db, store)
    ingest = _cli("ingest-enem", "--db", str(store), "--year", "2019", "--quiet",
                  "--microdata", str(big_year.microdata), "--items", str(big_year.items))
    time.sleep(1.0)  # let the ingest take the writers' turn
    run = _cli("run", "--db", str(store), "--backend", "random", "--year", "2023",
               "--areas", "MT", "--shuffles", "2", "--runs-dir", str(tmp_path / "runs"),
               "--quiet")
    _, run_err = run.communicate(timeout=600)
    _, ingest_err = ingest.communicate(timeout=600)
    assert ingest.returncode == 0, ingest_err
    assert run.returncode == 0, run_err
    assert "Traceback" not in run_err
    assert "waiting for" in run_err and "to finish writing store.duckdb" in run_err
