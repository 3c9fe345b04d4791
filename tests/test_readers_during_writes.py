"""Readers never wait on a writer, with real processes: a real Streamlit server keeps serving
pages to headless Chromium while an `enem-llm ingest-enem` process writes a new year into the
same store, and a model run that has to publish meanwhile waits its turn with a message.

Nothing here waits a fixed time for the other process to get somewhere: the tests wait for the
writer to hold the writers' lock with its name written, and pause it there (SIGSTOP) while what
must happen during the write happens, so a busy machine only makes them slower.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from demo import generate_demo_files
from store.layout import copy_store
from tests.browser_support import PAGE_TIMEOUT_MS
from tests.browser_support import serving as _serving
from tests.browser_support import tall_page as _new_page
from tests.browser_support import wait_until_rendered as _wait_until_rendered
from workflows.ingest import PARALLEL_FROM_BYTES

ROOT = Path(__file__).resolve().parent.parent
#: Enough candidates (a microdata file over workflows.ingest.PARALLEL_FROM_BYTES) that the
#: ingest scores in worker processes, as a real year's does, and outlasts a few page loads.
BIG_YEAR_EXAMINEES = 120_000
#: Page loads made while the ingest is paused inside its write (then more while it runs).
LOADS_WHILE_PAUSED = 2
#: Pages loaded in turn while the ingest runs: (URL path, charts expected).
LOOP_PAGES = (("", 1), ("Accuracy_vs_ability", 1), ("Person_fit", 2), ("Data", 0))


@pytest.fixture(scope="module")
def big_year(tmp_path_factory):
    files = generate_demo_files(tmp_path_factory.mktemp("big2019"), year=2019,
                                n_examinees=BIG_YEAR_EXAMINEES, seed=5, progress=False)
    assert files.microdata.stat().st_size >= PARALLEL_FROM_BYTES, "scored in one process"
    return files


def _cli(*words: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli", *words], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_writing(store: Path, writer: subprocess.Popen) -> None:
    """Return once ``writer`` has started writing the store (its copy, or DuckDB's
    write-ahead log when a writer opens the live file itself)."""
    signs = (store.with_name(store.name + ".next"), store.with_name(store.name + ".wal"))
    _poll_until(lambda: any(sign.exists() for sign in signs), writer, "began writing")


def _wait_for_writers_turn(store: Path, writer: subprocess.Popen) -> str:
    """Return, once ``writer`` holds the writers' lock of ``store`` and has written its name
    in the lock file (``store.connection.writer_turn``: the name is written only while the lock
    is held and wiped before it is released), the name it wrote."""
    lock = store.with_name(store.name + ".writer-lock")

    def holder() -> str:
        return lock.read_text().strip() if lock.exists() else ""

    _poll_until(lambda: holder() != "", writer, "took the writers' turn")
    return holder()


@contextmanager
def _paused(writer: subprocess.Popen, store: Path) -> Iterator[str]:
    """Wait until ``writer`` holds the writers' turn of ``store``, stop it there (SIGSTOP) and
    yield the name it wrote in the lock file; let it go on (SIGCONT) when the block ends."""
    _wait_for_writers_turn(store, writer)
    os.kill(writer.pid, signal.SIGSTOP)
    try:
        # Stopped while holding the lock: the name is wiped before the lock is let go, so a
        # name still there (and a process not ended) says the stop fell inside the write.
        lock = store.with_name(store.name + ".writer-lock")
        holder = lock.read_text().strip()
        assert holder and writer.poll() is None, "the writer finished before it was paused"
        yield holder
    finally:
        os.kill(writer.pid, signal.SIGCONT)


def _line_saying(process: subprocess.Popen, words: str, seconds: float = 300) -> str:
    """What ``process`` wrote on stderr up to and including the first line holding ``words``
    (all of it, if it ends first); a failure if neither happens within ``seconds``."""
    lines: list[str] = []
    said = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if words in line:
                break
        said.set()

    threading.Thread(target=read, daemon=True).start()
    assert said.wait(seconds), f"no line saying {words!r} within {seconds} s: {lines}"
    return "".join(lines)


def _poll_until(condition, writer: subprocess.Popen, what: str, seconds: float = 300) -> None:
    """Poll ``condition`` until it holds; a failure if ``writer`` ends first or ``seconds``
    pass (generous: a busy 2-core machine can take long to start a process)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert writer.poll() is None, f"the writer ended before it {what}: {writer.communicate()}"
        assert time.monotonic() < deadline, f"the writer never {what} within {seconds} s"
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
        try:
            during, loads, failures = 0, 0, []

            def load_next() -> None:
                nonlocal loads
                path, charts = LOOP_PAGES[loads % len(LOOP_PAGES)]
                page.goto(f"{base}/{path}?year=2023", timeout=PAGE_TIMEOUT_MS)
                _wait_until_rendered(page, charts)
                loads += 1
                if not _page_is_clean(page):
                    failures.append(path)

            # The first loads while the ingest is stopped inside its write (its lock held, its
            # copy of the store begun): they begin and end during the write on any machine.
            _wait_for_writing(store, ingest)
            with _paused(ingest, store):
                for _ in range(LOADS_WHILE_PAUSED):
                    load_next()
                    during += 1
            # Then while it writes for real, until it has finished.
            while True:
                load_next()
                if ingest.poll() is not None:
                    break
                during += 1  # this load began and ended while the ingest was writing
            _, err = ingest.communicate(timeout=600)
        finally:
            if ingest.poll() is None:
                ingest.kill()
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
    run = None
    try:
        with _paused(ingest, store) as holder:
            assert "ingest" in holder, holder
            run = _cli("run", "--db", str(store), "--backend", "random", "--year", "2023",
                       "--areas", "MT", "--shuffles", "2", "--runs-dir", str(tmp_path / "runs"),
                       "--quiet")
            # The run says whom it waits for once it finds the writers' turn taken.
            said = _line_saying(run, "waiting for")
        _, run_err = run.communicate(timeout=600)
        run_err = said + run_err
        _, ingest_err = ingest.communicate(timeout=600)
    finally:
        for process in (ingest, run):
            if process is not None and process.poll() is None:
                process.kill()
    assert ingest.returncode == 0, ingest_err
    assert run.returncode == 0, run_err
    assert "Traceback" not in run_err
    assert "waiting for" in run_err and "to finish writing store.duckdb" in run_err
    assert f"waiting for {holder} to finish writing store.duckdb" in run_err
