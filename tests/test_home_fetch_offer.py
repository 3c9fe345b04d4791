"""Home's offer of real data (``dashboard.fetch_offer``): on a demo or empty store it says what
each fetch downloads, from where and how large, with the command; only the operator gets the
button, which runs ``enem-llm fetch`` in the background against a local mirror
(tests.fetch_support) while the progress file (``workflows.fetch.progress``) goes through the
phases to done; a store with real candidates shows no offer.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from cli.main import build_parser, main
from dashboard.access import Access
from dashboard.fetch_offer import (
    ITEMS_ONLY_KEY,
    TITLE,
    YEAR_KEY,
    human_bytes,
    inep_facts,
    wants_real_data,
)
from demo import generate_demo_files
from store.layout import copy_store
from tests.db_support import query_rows
from tests.fetch_support import inep_zip, running_server
from tests.page_support import assert_clean, messages
from workflows.fetch import progress as progress_module
from workflows.fetch.launch import (
    PROGRESS_FILE,
    FetchRequest,
    fetch_command,
    fetch_folder,
    fetch_job,
    start_fetch_in_background,
)
from workflows.fetch.progress import (
    WRITE_INTERVAL_SECONDS,
    FetchBusyError,
    ProgressFile,
    is_locked,
    read_progress,
    reporting,
)
from workflows.fetch.sources import INEP_LATEST_YEAR, INEP_ZIP, MIRROR_ENV_VAR
from workflows.ingest import ingest_year

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120
FETCHED_YEAR = 2022
FETCHED_CANDIDATES = 300


@pytest.fixture
def demo_store(tmp_path, ingested_2023, monkeypatch) -> Path:
    """A writable copy of the small synthetic 2023 store, which the dashboard reads."""
    db = tmp_path / "store" / "enem.duckdb"
    db.parent.mkdir()
    copy_store(ingested_2023[0], db)
    monkeypatch.setenv("ENEM_DB", str(db))
    return db


@pytest.fixture(scope="module")
def zip_of_2022(tmp_path_factory) -> bytes:
    """INEP's ZIP of a tiny generated 2022 (the store sees it as real: it comes through
    ``fetch inep``)."""
    files = generate_demo_files(tmp_path_factory.mktemp("fetch2022"), year=FETCHED_YEAR,
                                n_examinees=FETCHED_CANDIDATES, seed=3, progress=False)
    return inep_zip({files.microdata.name: files.microdata.read_bytes(),
                     files.items.name: files.items.read_bytes()},
                    top=f"microdados_enem_{FETCHED_YEAR}")


def home() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert_clean(app)
    return app


def offer(app: AppTest):
    """The "Add real data" expander, or None."""
    found = [e for e in app.expander if e.label == TITLE]
    assert len(found) <= 1
    return found[0] if found else None


def texts(element) -> str:
    """Every Markdown, caption and code text under ``element``, joined."""
    parts = [*element.markdown, *element.caption, *element.code, *element.info]
    return "\n".join(str(part.value) for part in parts)


def fetch_buttons(app: AppTest) -> list[str]:
    return [b.label for b in app.button if b.label.startswith("Fetch ")]


# --- (a) the offer, as a viewer ------------------------------------------------------------------

def test_a_viewer_reads_what_would_be_downloaded_and_gets_no_button(demo_store):
    app = home()
    section = offer(app)
    assert section is not None and not section.proto.expanded
    shown = texts(section)
    assert INEP_ZIP.url(year=INEP_LATEST_YEAR) in shown
    assert "about 0.5–1.8 GB for one year's ZIP" in shown
    assert f".venv/bin/enem-llm fetch inep --year {INEP_LATEST_YEAR}" in shown

    app.selectbox(key=YEAR_KEY).set_value(FETCHED_YEAR).run()
    assert_clean(app)
    shown = texts(offer(app))
    assert ("https://download.inep.gov.br/microdados/microdados_enem_2022.zip" in shown)
    assert ".venv/bin/enem-llm fetch inep --year 2022" in shown
    assert "MICRODADOS_ENEM_2022.csv" in shown and "ITENS_PROVA_2022.csv" in shown
    app.toggle(key=ITEMS_ONLY_KEY).set_value(True).run()
    assert ".venv/bin/enem-llm fetch inep --year 2022 --items-only" in texts(offer(app))

    # No button, one line saying whose it is, and no path of the server anywhere.
    assert fetch_buttons(app) == []
    assert "Starting a fetch from this page is for this dashboard's operator" in messages(app)
    page = texts(app) + messages(app)
    assert str(demo_store.parent) not in page
    # The paper's files and their sizes are offered too (the button would need 2019–2022).
    assert "enem-experiments-results-processed-with-irt-lz.parquet" in page
    assert "under 1 MB per results file" in page


def test_an_empty_store_offers_real_data_open_under_the_title(monkeypatch, pages_empty_db):
    monkeypatch.setenv("ENEM_DB", str(pages_empty_db))
    app = home()
    assert app.title[0].value.startswith("When an LLM passes ENEM")
    assert "is empty: nothing has been ingested yet" in messages(app)
    section = offer(app)
    assert section is not None and section.proto.expanded
    assert INEP_ZIP.url(year=INEP_LATEST_YEAR) in texts(section)


# --- (b) the operator's button -------------------------------------------------------------------

def test_the_operator_fetches_a_year_in_the_background_with_progress(demo_store, zip_of_2022,
                                                                      monkeypatch, as_operator):
    with running_server() as server:
        server.serve(INEP_ZIP.path.format(year=FETCHED_YEAR), zip_of_2022)
        # The dashboard's environment names the mirror; the detached job inherits it.
        monkeypatch.setenv(MIRROR_ENV_VAR, server.url)
        app = home()
        assert fetch_buttons(app) == [f"Fetch INEP {INEP_LATEST_YEAR}",
                                      "Fetch the paper's results"]
        assert app.button(key="home.fetch.paper").disabled  # 2019–2022 items are missing
        assert f"files come from `{server.url}`" in texts(offer(app))
        app.selectbox(key=YEAR_KEY).set_value(FETCHED_YEAR).run()
        app.button(key="home.fetch.inep").click().run()
        assert_clean(app)
        assert "Starting the fetch of INEP 2022…" in messages(app)
        assert app.button(key="home.fetch.inep").disabled  # one fetch at a time

        job = wait_for_end(demo_store)
    log = job.log.read_text()
    assert job.state == "done", log
    assert job.progress.history == ("starting", "downloading", "checking", "extracting",
                                    "ingesting", "done"), log
    assert job.progress.task == "INEP 2022"
    assert job.log.parent == fetch_folder(demo_store)
    assert server.gets(INEP_ZIP.path.format(year=FETCHED_YEAR)) == [None]
    assert query_rows(demo_store, "SELECT source, is_synthetic, rows_read FROM ingests "
                                  "WHERE year = ?", [FETCHED_YEAR]) == [
        ("inep", False, FETCHED_CANDIDATES)]

    app.run()
    assert_clean(app)
    assert ("Fetched INEP 2022: it is in the store. Pick **2022** in the sidebar's **Year**"
            in messages(app))
    [years] = [box for box in app.sidebar.selectbox if box.label == "Year"]
    assert str(FETCHED_YEAR) in years.options
    # The store holds real candidates now: the offer has gone.
    assert offer(app) is None


def test_a_working_fetch_shows_its_bytes_to_everyone_and_blocks_the_button(demo_store,
                                                                             monkeypatch):
    path = fetch_folder(demo_store) / PROGRESS_FILE
    with reporting(path, task="INEP 2021") as report:
        report.phase("downloading", file="microdados_enem_2021.zip", total=1_200_000_000,
                     done=312_400_000)
        app = home()  # a viewer
        [bar] = app.get("progress")
        assert bar.proto.text.startswith(
            "Fetching INEP 2021 — step 1 of 4: downloading `microdados_enem_2021.zip`: "
            "312.4 MB of 1.2 GB (26%)")
        assert offer(app).proto.expanded
        report.phase("ingesting", file="MICRODADOS_ENEM_2021.csv")
        monkeypatch.setattr("dashboard.access.session_access",
                            lambda config=None: Access(True))
        app = home()  # the operator
        assert "step 4 of 4: ingesting `MICRODADOS_ENEM_2021.csv`" in messages(app)
        assert app.button(key="home.fetch.inep").disabled


def wait_for_end(db: Path, seconds: float = 150):
    """The store's fetch once it no longer starts or works."""
    deadline = time.monotonic() + seconds
    while (job := fetch_job(db)).working:
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    return job


def test_a_second_launch_is_refused_while_a_fetch_holds_the_file(tmp_path):
    db = tmp_path / "enem.duckdb"
    path = fetch_folder(db) / PROGRESS_FILE
    with reporting(path, task="INEP 2021") as report:
        report.phase("downloading", file="microdados_enem_2021.zip", total=10)
        assert fetch_job(db).state == "working"
        with pytest.raises(FetchBusyError, match="INEP 2021 is already under way"):
            start_fetch_in_background(FetchRequest("inep", 2020), db)
    assert read_progress(path).phase == "done"
    assert not is_locked(path)


def test_the_background_command_is_the_terminal_command_plus_the_progress_file(tmp_path):
    db = tmp_path / "enem.duckdb"
    words = fetch_command(FetchRequest("inep", 2019, items_only=True), db)
    args = build_parser().parse_args(words[words.index("fetch"):])
    assert (args.year, args.items_only, args.quiet) == ([2019], True, True)
    assert Path(args.db) == db.absolute()
    assert Path(args.progress_file) == fetch_folder(db) / PROGRESS_FILE
    assert fetch_folder(db) == tmp_path / "enem.duckdb.fetch"


@pytest.mark.parametrize("request_args", [("inep", 2008), ("inep", None), ("texts", 2023),
                                          ("inep", "2022; rm -rf /")])
def test_only_known_sources_and_listed_years_can_be_launched(request_args):
    with pytest.raises(ValueError):
        FetchRequest(*request_args)


# --- (c) the progress file ------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def on_disk(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_writer_records_phases_and_bytes_and_throttles_byte_updates(tmp_path):
    path, clock = tmp_path / "progress.json", Clock()
    writer = ProgressFile(path, clock=clock)
    writer.phase("starting", task="INEP 2022")
    writer.phase("downloading", file="a.zip", total=1000, done=100)  # a resumed download
    assert on_disk(path)["done"] == 100 and on_disk(path)["total"] == 1000
    clock.now += WRITE_INTERVAL_SECONDS / 10
    writer.advance(200)
    assert on_disk(path)["done"] == 100  # too soon after the last write
    clock.now += WRITE_INTERVAL_SECONDS
    writer.advance(300)
    state = read_progress(path)
    assert (state.phase, state.file, state.done, state.total) == ("downloading", "a.zip", 600,
                                                                  1000)
    assert state.fraction == pytest.approx(0.6)
    assert state.pid == os.getpid() and state.task == "INEP 2022"
    writer.phase("extracting", file="a.zip", total=5000)  # a new phase starts at 0, at once
    assert (on_disk(path)["done"], on_disk(path)["total"]) == (0, 5000)
    writer.phase("ingesting", file="MICRODADOS_ENEM_2022.csv")
    state = read_progress(path)
    assert state.done is None and state.fraction is None
    writer.finish()
    state = read_progress(path)
    assert state.final and state.history == ("starting", "downloading", "extracting",
                                             "ingesting", "done")
    assert state.started_at == 1000.0 and state.updated_at == clock.now
    with pytest.raises(ValueError, match="unknown fetch phase"):
        writer.phase("uploading")


def test_a_write_replaces_the_file_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    writer = ProgressFile(path)
    writer.phase("downloading", file="a.zip", total=10)
    before = path.read_bytes()

    def refused(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(progress_module.os, "replace", refused)
    with pytest.raises(OSError, match="disk full"):
        writer.phase("checking", file="a.zip")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["progress.json"]  # no temporary left


def test_reporting_ends_in_done_or_failed_and_holds_the_lock(tmp_path):
    path = tmp_path / "progress.json"
    with reporting(path, task="x") as report:
        assert is_locked(path)
        with pytest.raises(FetchBusyError), reporting(path):
            pass
        assert read_progress(path).phase == "starting"  # the refused one wrote nothing
        report.phase("downloading", total=3)
    assert read_progress(path).phase == "done" and not is_locked(path)

    with pytest.raises(OSError), reporting(path, task="y") as report:
        report.phase("downloading", file="b.zip")
        raise OSError("cannot download http://x/b.zip:\n  connection refused")
    state = read_progress(path)
    assert (state.phase, state.file) == ("failed", "b.zip")
    assert state.message == "cannot download http://x/b.zip: connection refused"

    with pytest.raises(KeyboardInterrupt), reporting(path):
        raise KeyboardInterrupt
    assert read_progress(path).message.startswith("interrupted")

    with reporting(None) as report:  # no file asked for: nothing written, nothing locked
        report.phase("downloading", total=1)
        report.advance(1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["progress.json", "progress.json.lock"]


def test_the_command_line_writes_its_failure_to_the_progress_file(tmp_path, capsys):
    path = tmp_path / "progress.json"
    with running_server() as server:  # serves nothing: INEP has "not published" 2021
        code = main(["fetch", "inep", "--year", "2021", "--mirror", server.url, "--quiet",
                     "--db", str(tmp_path / "enem.duckdb"), "--dest", str(tmp_path / "dl"),
                     "--progress-file", str(path)])
    assert code == 2
    state = read_progress(path)
    assert (state.phase, state.task, state.history) == ("failed", "INEP 2021",
                                                        ("starting", "failed"))
    assert state.message == (f"INEP has not published 2021 at {server.url}/microdados/"
                             "microdados_enem_2021.zip; check the year or use --mirror")
    assert state.message in capsys.readouterr().err
    assert not is_locked(path)


@pytest.mark.parametrize("content", ["", "{", "[1]", '{"phase": "flying"}'])
def test_a_file_that_is_no_progress_reads_as_none(tmp_path, content):
    path = tmp_path / "progress.json"
    path.write_text(content)
    assert read_progress(path) is None
    assert read_progress(tmp_path / "absent.json") is None


def test_human_bytes():
    assert [human_bytes(n) for n in (0, 999, 1000, 312_400_000, 1_800_000_000)] == [
        "0 bytes", "999 bytes", "1.0 kB", "312.4 MB", "1.8 GB"]


# --- (d) a store with real candidates ------------------------------------------------------

@pytest.mark.parametrize(("rows", "wanted"), [
    ([], True),
    ([(2023, True, 5000)], True),                         # the synthetic demo
    ([(2022, False, 0)], True),                           # real items, no candidates
    ([(2023, True, 5000), (2022, False, 0)], True),
    ([(2023, True, 5000), (2022, False, 300)], False),    # a real year with people
])
def test_which_stores_want_real_data(rows, wanted):
    overview = pd.DataFrame(rows, columns=["year", "is_synthetic", "candidates"])
    assert wants_real_data(overview) is wanted


def test_a_store_with_real_candidates_shows_no_offer(tmp_path, monkeypatch, demo_files_2023):
    """Decided: no offer at all (not even collapsed) once the store has real candidates: Home
    is the reader's first figure, and more years come from the command line (docs/fetch.md)."""
    db = tmp_path / "real.duckdb"
    ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False,
                source="inep")
    monkeypatch.setenv("ENEM_DB", str(db))
    app = home()
    assert offer(app) is None
    assert fetch_buttons(app) == []
    assert "synthetic demo" not in messages(app)


def test_the_items_only_offer_says_what_it_stores():
    """Items only: the offer says the item file is stored as ingest-items does, not that a
    full year is ingested with the candidates."""
    only = inep_facts(2022, items_only=True)
    assert "ingest-items" in only["Then"] and "full year" not in only["Then"]
    assert "without the candidates" in only["What"]
    full = inep_facts(2022, items_only=False)
    assert "ingest-enem" in full["Then"] and "full year takes minutes" in full["Then"]
