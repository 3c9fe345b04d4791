"""``enem-llm fetch`` against servers that would hold it for ever or fill its disk (issue 40,
point 5): a dripping mirror ends in one ``error:`` line within the download's limits, a body
that does not fit on the disk is refused or stopped and its partial file removed, and a year
the ingest cannot read is refused before any request.

The server is tests.fetch_support's local stand-in for INEP (a mirror, ``--mirror``); the disk
is a real small tmpfs (the ``small_disk`` fixture).
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.fetch_support import fetch, files_under, one_error, random_text, running_server
from workflows.fetch.deadline import TransferLimits
from workflows.fetch.sources import INEP_ZIP

YEAR = 2023
ZIP_PATH = INEP_ZIP.path.format(year=YEAR)
#: How long a test waits for a fetch that may never end (the code before the limits).
PATIENCE = 60.0
#: Room above a limit for a loaded machine (the watch looks four times a second).
SLACK = 3.0


@pytest.fixture()
def server():
    with running_server() as started:
        yield started


def fetch_in_thread(capsys, *args) -> tuple[threading.Thread, dict]:
    """:func:`fetch` in a daemon thread; the dict gets its ``result`` and when it ``ended``."""
    outcome: dict = {}

    def run() -> None:
        outcome["result"] = fetch(capsys, *args)
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("limits, words", [
    (TransferLimits(total_seconds=3.0, stall_seconds=3600.0, stall_bytes=1),
     "took longer than the 3 s a download may take"),
    (TransferLimits(total_seconds=3600.0, stall_seconds=2.0, stall_bytes=1000),
     "fewer than 1,000 bytes arrived in 2 s"),
], ids=["total deadline", "least rate"])
def test_a_dripping_mirror_fails_with_one_error_within_the_limits(server, tmp_path, capsys,
                                                                  monkeypatch, limits, words):
    """A byte every 0.2 s: each read comes well within the 60 s read timeout, so only the
    download's own limits (made short here) end it."""
    monkeypatch.setattr("workflows.fetch.download.LIMITS", limits)
    server.serve(ZIP_PATH, random_text(50_000), drip_seconds=0.2)
    dest = tmp_path / "downloads"
    started = time.monotonic()
    thread, outcome = fetch_in_thread(capsys, "inep", "--year", YEAR, "--mirror", server.url,
                                      "--dest", dest, "--db", tmp_path / "enem.duckdb")
    thread.join(PATIENCE)
    assert not thread.is_alive(), f"the fetch from a dripping mirror ran over {PATIENCE} s"
    took = outcome["ended"] - started
    limit = min(limits.total_seconds, limits.stall_seconds)
    with capsys.disabled():  # the measurement, for `pytest -s`
        print(f"\ndripping mirror: the fetch failed after {took:.2f} s (limit {limit:g} s)")
    code, _, err = outcome["result"]
    assert code == 1
    line = one_error(err)
    assert words in line and "was stopped after" in line, line
    assert "run the same command again to resume" in line
    assert took <= limit + SLACK, f"took {took:.1f} s"
    # What arrived is kept for a resume, and nothing was extracted or stored.
    assert files_under(dest) == [f"inep/{YEAR}/microdados_enem_{YEAR}.zip.part"]
    assert not (tmp_path / "enem.duckdb").exists()


def test_a_body_without_length_that_outgrows_the_disk_is_stopped_and_removed(
        server, tmp_path, capsys, small_disk):
    disk = small_disk(1 << 20)
    server.serve(ZIP_PATH, random_text(3 << 20), no_length=True)
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--mirror", server.url,
                         "--dest", disk, "--db", tmp_path / "enem.duckdb")
    assert code == 1
    line = one_error(err)
    assert "announced no size" in line and "the partial file was removed" in line, line
    assert files_under(disk) == [], "nothing of the download stays on the disk"


def test_a_body_announced_larger_than_the_disk_is_refused_before_writing(server, tmp_path,
                                                                         capsys, small_disk):
    disk = small_disk(1 << 20)
    server.serve(ZIP_PATH, random_text(3 << 20))
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--mirror", server.url,
                         "--dest", disk, "--db", tmp_path / "enem.duckdb")
    assert code == 1
    line = one_error(err)
    assert "do not fit on the disk" in line and "nothing was written" in line, line
    assert files_under(disk) == []


@pytest.mark.parametrize("years", [[1999], [2008], [YEAR, 1999]])
def test_a_year_the_ingest_cannot_read_is_refused_before_any_request(server, tmp_path, capsys,
                                                                     years):
    server.serve(ZIP_PATH, random_text(1000))
    words = [word for year in years for word in ("--year", year)]
    code, _, err = fetch(capsys, "inep", *words, "--mirror", server.url,
                         "--dest", tmp_path / "downloads", "--db", tmp_path / "enem.duckdb")
    assert code == 2
    line = one_error(err)
    assert f"--year {years[-1]}" in line and "from 2009 on" in line, line
    assert server.requests == [], "refused before asking the server anything"
    assert files_under(tmp_path) == []
