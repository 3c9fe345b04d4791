"""The runs service: start, follow, cancel and list model runs, and show their exact prompts.

The command line and the Runs page both go through these functions, so a run started from one
looks the same in the other. A run started in the background is a separate process
(``python -m workflows.run_worker``) that reads its spec from the run folder; its progress is
the folder's ``status.json`` and its liveness the folder's lock (see ``workflows.run_folder``).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.plan import RANDOM_BASELINE, RunSpec, exact_prompt
from store.connection import PROJECT_ROOT, connected
from store.model_runs import ExamReader
from workflows.run_execution import BATCH_ITEMS, check_booklet_areas, check_run, claim_spec
from workflows.run_folder import RunFolder, read_run_folders

#: What a run whose status says "running" but whose process is gone is shown as.
STOPPED_WORDING = "stopped: the process is gone; start the same run again to resume"
SKIPPED_WORDING = "items skipped (no text in that language, or annulled)"


class RunNotRunning(RuntimeError):
    """Cancel was asked for a run that no process is working on."""


def runs_directory(db_path: Path, runs_dir: str | os.PathLike | None = None) -> Path:
    """Run folders live in ``runs_dir`` when given, else in ``runs/`` beside the database."""
    return Path(runs_dir) if runs_dir else Path(db_path).parent / "runs"


@dataclass(frozen=True)
class RunProgress:
    """One run folder as the service reports it: its spec, live status and whether it is alive."""

    run_id: str
    spec: dict[str, Any]
    status: dict[str, Any]
    alive: bool

    @property
    def state(self) -> str:
        """The run's state in words: running, finished, cancelled, failed or stopped (…)."""
        state = self.status.get("status", "?")
        if state == "running" and not self.alive:
            return STOPPED_WORDING
        return state

    @property
    def units_done(self) -> int:
        return int(self.status.get("units_done") or 0)

    @property
    def units_total(self) -> int:
        return int(self.status.get("units_total") or 0)

    @property
    def items_per_s(self) -> float | None:
        return self.status.get("items_per_s")

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this process's rate (None unless the run is alive)."""
        return self.status.get("eta_s") if self.alive else None

    @property
    def error(self) -> str | None:
        return self.status.get("error")

    @property
    def skipped(self) -> list[str]:
        return list(self.status.get("skipped") or [])

    def summary(self) -> str:
        """One line: ``<run id>: <state>, done/total items[, error: …]``."""
        total = self.units_total or "?"
        line = f"{self.run_id}: {self.state}, {self.units_done}/{total} items"
        return line + (f", error: {self.error}" if self.error else "")


def list_runs(runs_dir: Path) -> list[RunProgress]:
    """Every run folder under ``runs_dir``, newest first."""
    return [RunProgress(run_id=folder.run_id, spec=folder.read_json("spec.json") or {},
                        status=folder.read_json("status.json") or {}, alive=folder.is_locked())
            for folder in read_run_folders(runs_dir)]


@dataclass(frozen=True)
class LaunchedRun:
    run_id: str
    pid: int
    folder: Path


def start_in_background(spec: RunSpec, db_path: Path, runs_dir: Path,
                        batch_items: int = BATCH_ITEMS) -> LaunchedRun:
    """Start ``spec`` as a separate process and return at once; its output goes to the run
    folder's ``log.txt``. The spec is written to the folder first, so the worker and any later
    resume read exactly this spec (a different spec already there is refused). A spec that
    cannot work (``check_run``: no key, no such year, a booklet of another area) is refused
    with ValueError before any folder or process exists."""
    check_run(spec, db_path)
    folder = RunFolder(Path(runs_dir) / spec.run_id)
    claim_spec(folder, spec)
    command = [sys.executable, "-m", "workflows.run_worker", "--db", str(db_path),
               "--runs-dir", str(runs_dir), "--batch-items", str(int(batch_items)), spec.run_id]
    with open(folder.root / "log.txt", "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   cwd=PROJECT_ROOT)
    return LaunchedRun(spec.run_id, process.pid, folder.root)


def cancel(run_id: str, runs_dir: Path) -> str:
    """Ask a live run to stop after its current batch; returns the sentence to show.

    Raises RunNotRunning when no process is working on the run.
    """
    folder = RunFolder(Path(runs_dir) / run_id)
    status = folder.read_json("status.json")
    if not status or not folder.is_locked():
        raise RunNotRunning(f"run {run_id} is not running")
    os.kill(int(status["pid"]), signal.SIGTERM)
    return f"asked run {run_id} (pid {status['pid']}) to stop after its current batch"


def command_line(spec: RunSpec, db_path: Path) -> str:
    """The ``enem-llm run`` command that makes the same run in a terminal."""
    words = ["enem-llm", "run", "--db", str(db_path), "--backend", spec.backend,
             "--year", str(spec.year), "--areas", *spec.areas, "--languages", *spec.languages,
             "--shots", *map(str, spec.shots), "--shuffles", str(spec.n_shuffles),
             "--seed", str(spec.seed)]
    if spec.model and (spec.model != RANDOM_BASELINE or spec.backend != "random"):
        words += ["--model", spec.model]
    for flag, value in (("--gguf-file", spec.backend_options.get("gguf_file")),
                        ("--base-url", spec.backend_options.get("base_url")),
                        ("--request-timeout", spec.backend_options.get("timeout")),
                        ("--family", spec.family), ("--model-name", spec.model_name)):
        if value:
            words += [flag, str(value)]
    return shlex.join(words)


def prompt_text(db_path: Path, **settings: Any) -> str:
    """The exact prompt of one item and shuffle (``inference.plan.exact_prompt``'s settings).

    Raises ValueError for a position outside the booklet or a booklet of another area.
    """
    with connected(Path(db_path), read_only=True) as con:
        source = ExamReader(con)
        year, area = settings["year"], settings["area"]
        booklet = settings.get("booklet") or source.default_booklet(year, area)
        language = settings.get("lc_language", 1) if area == "LC" else None
        form = source.load_form(year, int(booklet), language)
        check_booklet_areas({area: form})
        if not 1 <= settings["position"] <= form.n_items:
            raise ValueError(f"position must be 1–{form.n_items} (the sorted position of the "
                             f"item in {area} booklet {form.booklet_id})")
        return exact_prompt(source, **settings)
