"""What a killed or failed command leaves behind is cleaned up, by itself or by the next one.

Real processes killed by SIGKILL at a named phase, real files and a real small disk (tmpfs):

* a parallel ingest killed while its workers score leaves no worker process alive, and the
  next ingest removes the scratch folder it left (but never the folder of a live ingest);
* a write session whose copy of the store fills the disk leaves no partial copy;
* ``remove-run`` killed while deleting a run's folder is finished by the next ``remove-run``
  of that run, or by the listing.
"""

from __future__ import annotations

import errno
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from inference.plan import RunSpec
from store.connection import staged_path, writing
from store.layout import copy_store
from workflows.ingest import ingest_year
from workflows.runs.folder import RunFolder

ROOT = Path(__file__).resolve().parent.parent
SCRATCH_GLOB = ".ingest-scratch-*"
#: Generous bound on waits for something that should happen at once (a process dying, a file
#: appearing); only reached when the behaviour under test is broken.
PATIENCE_SECONDS = 60.0

#: ``enem-llm`` (``cli.main``) with two scoring workers even for the small test year, and each
#: worker held at the start of its area until the file ``go`` appears in the gate folder: the
#: process is then known to be scoring, with its pool's workers busy.
GATED_INGEST = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path

    import workflows.area_scoring as area_scoring
    import workflows.ingest as ingest
    from cli.main import main

    gate = Path(sys.argv[1])
    real_score_area = area_scoring._score_area

    def gated_score_area(*args):
        (gate / f"scoring-{os.getpid()}").touch()
        deadline = time.monotonic() + 600  # never hang for ever, even when the test fails
        while not (gate / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return real_score_area(*args)

    area_scoring._score_area = gated_score_area
    ingest.PARALLEL_FROM_BYTES = 0
    ingest.SCORING_WORKERS = 2
    sys.exit(main(sys.argv[2:]))
""")


def _wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen"
        time.sleep(0.02)


def _ingest_words(db: Path, files) -> list[str]:
    return ["--db", str(db), "ingest-enem", "--year", "2023", "--microdata",
            str(files.microdata), "--items", str(files.items), "--quiet"]


def _start_gated_ingest(tmp_path: Path, db: Path, files) -> tuple[subprocess.Popen, Path]:
    gate = tmp_path / "gate"
    gate.mkdir()
    with open(tmp_path / "ingest.err", "wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-c", GATED_INGEST, str(gate), *_ingest_words(db, files)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors)
    return process, gate


def _scoring_workers(process: subprocess.Popen, gate: Path) -> list[psutil.Process]:
    """Wait until both workers of ``process`` are scoring an area; return them."""
    _wait_until(lambda: len(list(gate.glob("scoring-*"))) == 2 or process.poll() is not None,
                "both workers starting to score")
    assert process.poll() is None, "the ingest ended before scoring"
    pids = {int(path.name.split("-")[1]) for path in gate.glob("scoring-*")}
    workers = psutil.Process(process.pid).children()
    assert {worker.pid for worker in workers} == pids  # the pool's two workers, and only them
    return workers


def _alive(process: psutil.Process) -> bool:
    """True while ``process`` runs (a zombie waiting for whoever adopted it to reap it has
    ended)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _kill_during_scoring(tmp_path: Path, db: Path, files) -> list[psutil.Process]:
    """Start a parallel ingest into ``db``, SIGKILL it while its workers score and let the
    workers go on; returns the workers."""
    process, gate = _start_gated_ingest(tmp_path, db, files)
    try:
        workers = _scoring_workers(process, gate)
        assert list(db.parent.glob(SCRATCH_GLOB))  # scoring reads its records from there
    finally:
        process.kill()
        process.wait()
    (gate / "go").touch()  # workers that outlived it would now finish their area and wait on
    return workers


def test_a_killed_parallel_ingest_leaves_no_worker_process(tmp_path, demo_files_2023):
    db = tmp_path / "store" / "enem.duckdb"
    workers = _kill_during_scoring(tmp_path, db, demo_files_2023)
    try:
        deadline = time.monotonic() + PATIENCE_SECONDS
        while any(_alive(worker) for worker in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [worker.pid for worker in workers if _alive(worker)] == []
    finally:
        for worker in workers:
            if _alive(worker):
                worker.kill()


def test_the_next_ingest_removes_the_scratch_folder_of_a_killed_one(tmp_path, demo_files_2023):
    db = tmp_path / "store" / "enem.duckdb"
    workers = _kill_during_scoring(tmp_path, db, demo_files_2023)
    for worker in workers:  # (whether they died with it is the test above)
        if _alive(worker):
            worker.kill()
    [left] = db.parent.glob(SCRATCH_GLOB)
    done = subprocess.run([sys.executable, "-m", "cli", *_ingest_words(db, demo_files_2023)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "year 2023" in done.stdout
    assert not left.exists()
    assert list(db.parent.glob(SCRATCH_GLOB)) == []


def test_an_ingest_never_removes_the_scratch_folder_of_a_live_one(tmp_path, demo_files_2023):
    live_db = tmp_path / "store" / "live.duckdb"
    process, gate = _start_gated_ingest(tmp_path, live_db, demo_files_2023)
    try:
        _scoring_workers(process, gate)
        [live] = live_db.parent.glob(SCRATCH_GLOB)
        # Another store in the same folder: its ingest cleans the folder up as it starts.
        ingest_year(live_db.parent / "other.duckdb", 2023, demo_files_2023.microdata,
                    demo_files_2023.items, progress=False)
        assert live.is_dir()
        (gate / "go").touch()
        assert process.wait(timeout=PATIENCE_SECONDS) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert list(live_db.parent.glob(SCRATCH_GLOB)) == []


def test_a_copy_that_fills_the_disk_leaves_no_partial_copy(tmp_path, small_disk):
    built = tmp_path / "built.duckdb"
    with writing(built) as con:
        con.execute("CREATE TABLE t AS SELECT range AS v, md5(range::VARCHAR) AS h "
                    "FROM range(200000)")
    size = built.stat().st_size
    # Room for the store and half of a second copy.
    disk = small_disk(-(-(size + size // 2) // 4096) * 4096)
    store = disk / "store.duckdb"
    copy_store(built, store)
    before, free = store.read_bytes(), shutil.disk_usage(disk).free
    with pytest.raises(OSError) as raised, writing(store) as con:
        con.execute("INSERT INTO t VALUES (-1, 'never')")
    assert raised.value.errno == errno.ENOSPC
    assert not staged_path(store).exists()
    assert shutil.disk_usage(disk).free == free  # the space of the partial copy is given back
    assert store.read_bytes() == before


def _failed_run_folder(runs_dir: Path, parts: int) -> RunFolder:
    """A failed run's folder holding ``parts`` (empty) part files: deleting it takes a while."""
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",))
    folder = RunFolder(runs_dir / spec.run_id)
    folder.write_json("spec.json", spec.to_dict())
    folder.update_status(status="failed", error="ScoringError: boom")
    folder.parts.mkdir()
    for index in range(parts):
        (folder.parts / f"part-{index:06d}.parquet").touch()
    return folder


@pytest.mark.parametrize("next_command", ["remove-run", "runs"])
def test_a_killed_remove_run_is_finished_by_the_next_command(tmp_path, next_command):
    runs_dir = tmp_path / "runs"
    folder = _failed_run_folder(runs_dir, parts=30_000)
    words = ["--db", str(tmp_path / "no-store.duckdb")]
    removing = subprocess.Popen(
        [sys.executable, "-m", "cli", "remove-run", folder.run_id, *words, "--runs-dir",
         str(runs_dir)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The folder stops being a run (its spec is gone) once its deletion has begun.
        _wait_until(lambda: not (folder.root / "spec.json").exists()
                    or removing.poll() is not None, "the removal starting")
    finally:
        removing.kill()
        removing.wait()
    assert removing.returncode == -signal.SIGKILL, "the removal ended before it was killed"
    assert list(runs_dir.iterdir())  # killed halfway: part of the run is still on disk

    arguments = [folder.run_id] if next_command == "remove-run" else []
    done = subprocess.run([sys.executable, "-m", "cli", next_command, *arguments, *words,
                           "--runs-dir", str(runs_dir)], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    if next_command == "remove-run":
        assert done.stdout.startswith(f"removed run {folder.run_id}: ")
    else:
        assert done.stdout.startswith("no runs yet")
    assert list(runs_dir.iterdir()) == []
