"""The runs service (workflows/runs/service.py) that the command line and the Runs page share."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.main import build_parser
from cli.run_commands import add_run_parser, specs_from_args
from inference.plan import RANDOM_BASELINE, RunSpec
from store.connection import connected, open_reader
from workflows.runs import service
from workflows.runs.execution import execute_run
from workflows.runs.folder import RunFolder


def _spec(**changes) -> RunSpec:
    settings = {"model": "random-baseline", "backend": "random", "year": 2023, "areas": ("MT",),
                "languages": ("pt", "en"), "shots": (0,), "n_shuffles": 4, "seed": 5}
    return RunSpec(**{**settings, **changes})


def _wait_until(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _parse(words: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="enem-llm")
    add_run_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(words)


def test_background_run_finishes_and_lands_in_the_store(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    spec = _spec()
    launched = service.start_in_background(spec, demo_db, runs_dir, batch_items=10)
    assert launched.run_id == spec.run_id and launched.folder == runs_dir / spec.run_id
    # The worker read the spec the service wrote, so the folder holds exactly this spec.
    assert RunSpec.from_dict(json.loads((launched.folder / "spec.json").read_text())) == spec

    def finished() -> bool:
        status = RunFolder(launched.folder).read_json("status.json") or {}
        return status.get("status") == "finished" and not RunFolder(launched.folder).is_locked()

    _wait_until(finished)
    [progress] = service.list_runs(runs_dir)
    assert progress.run_id == spec.run_id and progress.state == "finished"
    assert progress.units_done == progress.units_total == 2 * 45
    assert progress.summary() == f"{spec.run_id}: finished, 90/90 items"
    con = open_reader(demo_db)
    patterns = con.execute("SELECT count(*) FROM model_scores WHERE run_id = ?",
                           [spec.run_id]).fetchone()[0]
    con.close()
    assert patterns == 2 * 4
    with pytest.raises(service.RunNotRunning, match="is not running"):
        service.cancel(spec.run_id, runs_dir)


def test_a_folder_holding_another_spec_is_refused(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    spec = _spec()
    folder = RunFolder(runs_dir / spec.run_id)
    folder.write_json("spec.json", _spec(seed=6).to_dict())
    with pytest.raises(ValueError, match="holds a different spec"):
        service.start_in_background(spec, demo_db, runs_dir)


def test_a_run_whose_process_died_is_reported_stopped(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    spec = _spec()
    folder = RunFolder(runs_dir / spec.run_id)
    folder.write_json("spec.json", spec.to_dict())
    folder.update_status(status="running", units_done=3, units_total=90, pid=999_999)
    [progress] = service.list_runs(runs_dir)
    assert not progress.alive and progress.state == service.STOPPED_WORDING
    assert progress.eta_s is None


def test_the_command_line_shown_makes_the_same_run(demo_db):
    specs = [_spec(),
             _spec(model="some/model", backend="transformers", shots=(0, 4), n_shuffles=30,
                   backend_options={"gguf_file": "m.gguf", "device": "cpu", "batch_size": 8},
                   family="fam", model_name="M", instruction_tuned=False, lc_language=0,
                   booklets={"MT": 1234}),
             _spec(model="gpt-x", backend="openai",
                   backend_options={"base_url": "http://h/v1", "timeout": 12.5}),
             _spec(model="gpt-x", backend="openai", prompt_variant="chain-of-thought",
                   backend_options={"answer_method": "generate", "temperature": 0.3,
                                    "max_new_tokens": 300})]
    for spec in specs:
        words = shlex.split(service.command_line(spec, demo_db))
        # The project's own command, by its full path, then the global --db, then `run`.
        assert words[:1] == service.project_command() or words[:3] == service.project_command()
        program = Path(words[0])
        assert program.is_absolute() and os.access(program, os.X_OK), words[0]
        args = build_parser().parse_args(words[len(service.project_command()):])
        assert args.command == "run" and args.db == str(demo_db.absolute())
        assert specs_from_args(args) == [spec]


def test_the_command_line_shown_runs_as_printed(demo_db, tmp_path):
    """Pasted into a shell from another folder, the printed command makes the very run."""
    spec = _spec(n_shuffles=2, languages=("pt",))
    printed = service.command_line(spec, demo_db)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(["bash", "-c", printed + " --quiet"], cwd=elsewhere, text=True,
                          capture_output=True, timeout=300, check=False,
                          env={k: v for k, v in os.environ.items() if k != "ENEM_DB"})
    assert done.returncode == 0, done.stderr
    assert f"run {spec.run_id} finished: 45/45 items" in done.stdout
    with open_reader(demo_db) as con:
        assert con.execute("SELECT count(*) FROM model_scores WHERE run_id = ?",
                           [spec.run_id]).fetchone()[0] == 2


def test_a_failed_run_is_removed_with_its_unpublished_rows(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    spec = _spec()
    folder = RunFolder(runs_dir / spec.run_id)
    folder.write_json("spec.json", spec.to_dict())
    folder.update_status(status="failed", error="ScoringError: boom", units_done=4,
                         units_total=90)
    # Rows a run left without being published (status other than 'finished').
    with connected(demo_db) as con:
        con.execute("INSERT INTO model_runs (run_id, model_id, status) VALUES (?, ?, 'failed')",
                    [spec.run_id, spec.model_id])
        con.execute("INSERT INTO model_scores (run_id, year, area) VALUES (?, 2023, 'MT')",
                    [spec.run_id])
    [progress] = service.list_runs(runs_dir)
    assert progress.removable
    said = service.remove_run(spec.run_id, demo_db, runs_dir)
    assert said == (f"removed run {spec.run_id}: its folder {folder.root} and 2 unpublished "
                    "rows from the database")
    assert not folder.root.exists() and service.list_runs(runs_dir) == []
    with open_reader(demo_db) as con:
        for table in ("model_runs", "model_scores", "model_responses"):
            assert con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?",
                               [spec.run_id]).fetchone()[0] == 0
    with pytest.raises(FileNotFoundError, match=f"no run {spec.run_id}"):
        service.remove_run(spec.run_id, demo_db, runs_dir)


def test_running_and_published_runs_are_never_removed(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    published = _spec(languages=("pt",), n_shuffles=2)
    execute_run(published, demo_db, runs_dir)
    with pytest.raises(service.RunNotRemovable, match="is published in the database"):
        service.remove_run(published.run_id, demo_db, runs_dir)
    assert (runs_dir / published.run_id / "spec.json").exists()

    running = _spec(seed=9)
    folder = RunFolder(runs_dir / running.run_id)
    folder.write_json("spec.json", running.to_dict())
    folder.update_status(status="failed")
    folder.acquire()  # a process works on it (e.g. it was launched again)
    try:
        listed = {run.run_id: run for run in service.list_runs(runs_dir)}
        assert not listed[running.run_id].removable
        with pytest.raises(service.RunNotRemovable, match="is running"):
            service.remove_run(running.run_id, demo_db, runs_dir)
    finally:
        folder.release()
    assert (folder.root / "spec.json").exists()
    for bad in ("..", "../runs", "a/b", ""):
        with pytest.raises(ValueError, match="is not a run id"):
            service.remove_run(bad, demo_db, runs_dir)
    assert runs_dir.exists()


def test_the_cli_and_the_service_print_the_same_prompt(demo_db):
    text = service.prompt_text(demo_db, year=2023, area="MT", position=2, language="en",
                               shots=1, shuffle=3, n_shuffles=30, seed=0, lc_language=1,
                               booklet=None)
    printed = subprocess.run(
        [sys.executable, "-m", "cli", "prompt", "--db", str(demo_db), "--year", "2023",
         "--area", "MT", "--position", "2", "--language", "en", "--shots", "1", "--shuffle", "3"],
        capture_output=True, text=True, check=True).stdout
    assert printed == text + "\n"
    assert text.endswith("Answer: (") and text.count("Question:") == 2


def test_foreground_and_background_runs_share_one_folder_layout(demo_db, tmp_path):
    spec = _spec(areas=("CN",), languages=("pt",))
    execute_run(spec, demo_db, tmp_path / "runs")
    [progress] = service.list_runs(tmp_path / "runs")
    assert progress.spec == json.loads(json.dumps(spec.to_dict()))
    assert progress.state == "finished" and not progress.skipped


def test_a_spec_that_cannot_work_is_refused_before_a_folder_exists(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    no_year = RunSpec(model=RANDOM_BASELINE, backend="random", year=1999, areas=("MT",),
                      languages=("pt",), shots=(0,), n_shuffles=2, seed=1)
    with pytest.raises(ValueError, match="1999"):
        service.start_in_background(no_year, demo_db, runs_dir)
    remote_without_key = RunSpec(model="some-model", backend="openai", year=2023, areas=("MT",),
                                 languages=("pt",), shots=(0,), n_shuffles=2, seed=1,
                                 backend_options={})  # the OpenAI API: its key is unset
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(ValueError, match="OPENAI_API_KEY"):
            service.start_in_background(remote_without_key, demo_db, runs_dir)
    assert not runs_dir.exists() or not any(runs_dir.iterdir())
