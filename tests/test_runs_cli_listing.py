"""``enem-llm runs`` lists run folders and the runs in the database, each marked where it
lives; ``enem-llm remove-run`` removes a run that ended without being published, and only
such a run; ``cancel`` and ``remove-run`` end alike on a run id that names no run. Every command
runs as its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference.plan import RunSpec
from store.connection import open_reader
from store.layout import copy_store
from workflows.runs.folder import RunFolder

ROOT = Path(__file__).resolve().parent.parent


def enem_llm(*args: str | Path) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "ENEM_DB"}
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT, check=False,
                          env=environment, capture_output=True, text=True, timeout=300)


@pytest.fixture
def db(tmp_path, pages_demo_db) -> Path:
    """A writable copy of the small demo, which holds the demo's own published runs."""
    target = tmp_path / "store" / "enem.duckdb"
    target.parent.mkdir()
    copy_store(pages_demo_db, target)
    return target


def stored(db: Path) -> dict[str, tuple]:
    with open_reader(db) as con:
        rows = con.execute(
            "SELECT r.run_id, r.model_id, r.label, r.backend, r.n_shuffles, "
            "(SELECT count(*) FROM model_scores s WHERE s.run_id = r.run_id) "
            "FROM model_runs r").fetchall()
    return {row[0]: row[1:] for row in rows}


def line_of(output: str, run_id: str) -> str:
    [line] = [line for line in output.splitlines() if line.startswith(f"{run_id} ")]
    return line


def test_runs_lists_the_database_runs_with_model_settings_and_patterns(db):
    runs = stored(db)
    assert len(runs) >= 2  # the demo's random baseline and SmolLM2 runs
    done = enem_llm("runs", "--db", db)
    assert done.returncode == 0, done.stderr
    for run_id, (model, label, backend, shuffles, patterns) in runs.items():
        line = line_of(done.stdout, run_id)
        assert line.startswith(f"{run_id} [database]: published as \"{label}\""), line
        assert f"model {model}," in line and f"backend {backend}," in line
        assert f"{shuffles} shuffles" in line and f"{patterns:,} patterns" in line


def test_a_local_run_is_marked_folder_and_database_and_a_failed_one_folder_only(db):
    finished = enem_llm("--db", db, "run", "--backend", "random", "--year", "2023", "--areas",
                        "MT", "--shuffles", "2", "--quiet")
    assert finished.returncode == 0, finished.stderr
    run_id = finished.stdout.split()[1]
    failed = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                     n_shuffles=3)
    folder = RunFolder(db.parent / "runs" / failed.run_id)
    folder.write_json("spec.json", failed.to_dict())
    folder.update_status(status="failed", units_done=4, units_total=45,
                         error="ScoringError: the backend went away")
    done = enem_llm("runs", "--db", db)
    assert done.returncode == 0, done.stderr
    line = line_of(done.stdout, run_id)
    assert line.startswith(f"{run_id} [run folder + database]: finished, 45/45 items; "
                           "published as"), line
    assert "2 patterns" in line
    assert line_of(done.stdout, failed.run_id) == (
        f"{failed.run_id} [run folder]: failed, 4/45 items, error: ScoringError: the backend "
        "went away")


def test_remove_run_removes_a_failed_run_and_refuses_a_published_one(db):
    failed = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                     n_shuffles=3)
    folder = RunFolder(db.parent / "runs" / failed.run_id)
    folder.write_json("spec.json", failed.to_dict())
    folder.update_status(status="cancelled", units_done=8, units_total=45)
    done = enem_llm("remove-run", failed.run_id, "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"removed run {failed.run_id}: its folder {folder.root}"
    assert not folder.root.exists()
    assert failed.run_id not in enem_llm("runs", "--db", db).stdout

    published = next(iter(stored(db)))
    refused = enem_llm("remove-run", published, "--db", db)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: run {published} is published"), \
        refused.stderr
    assert published in stored(db)

    unknown = enem_llm("remove-run", "no-such-run", "--db", db)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: no run no-such-run")


def test_cancel_of_an_unknown_run_is_bad_input_as_for_remove_run(db):
    """The same mistake ends the same way: a run id that names no run is bad input (exit 2) for
    both commands; a run that exists but is not running is refused while working (exit 1)."""
    for command in ("cancel", "remove-run"):
        unknown = enem_llm(command, "no-such-run", "--db", db)
        assert unknown.returncode == 2, (command, unknown.stderr)
        assert unknown.stderr.startswith("error: no run no-such-run"), (command, unknown.stderr)
        assert len(unknown.stderr.strip().splitlines()) == 1, unknown.stderr
        not_an_id = enem_llm(command, "..", "--db", db)
        assert not_an_id.returncode == 2 and "is not a run id" in not_an_id.stderr, command

    stopped = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                      n_shuffles=3)
    folder = RunFolder(db.parent / "runs" / stopped.run_id)
    folder.write_json("spec.json", stopped.to_dict())
    folder.update_status(status="cancelled", units_done=8, units_total=45)
    idle = enem_llm("cancel", stopped.run_id, "--db", db)
    assert idle.returncode == 1 and idle.stderr.startswith(
        f"error: run {stopped.run_id} is not running"), idle.stderr
