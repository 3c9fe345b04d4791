"""The runs service: start, follow, cancel and list model runs, and show their exact prompts.

The command line and the Runs page both go through these functions, so a run started from one
looks the same in the other. A run started in the background is a separate process
(``python -m workflows.runs.worker``, started by ``workflows.background``) that reads its spec
from the run folder; its progress is the folder's ``status.json`` and its liveness the folder's
lock (see ``workflows.runs.folder``).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from inference.plan import RANDOM_BASELINE, RunSpec, exact_prompt
from inference.prompt_variants import BASE_VARIANT
from store.connection import connected
from store.model_runs import ExamReader
from store.run_listing import delete_unpublished_rows, run_presence, stored_runs
from workflows.background import modified_at, project_command, start_detached, still_starting
from workflows.runs.execution import BATCH_ITEMS, check_booklet_areas, check_run, claim_spec
from workflows.runs.folder import (
    RunBusyError,
    RunFolder,
    finish_removal,
    read_run_folders,
    remove_run_folder,
)
from workflows.runs.slots import MAX_QUEUED

#: What a run whose status says "running" but whose process is gone is shown as.
STOPPED_WORDING = "stopped: the process is gone; start the same run again to resume"
SKIPPED_WORDING = "items skipped (no text in that language, or annulled)"


#: Folder states a run can be removed in (a stopped run's status still says "running").
REMOVABLE_STATES = ("failed", "cancelled", STOPPED_WORDING)


class RunNotRunning(RuntimeError):
    """Cancel was asked for a run that no process is working on."""


class RunNotRemovable(RuntimeError):
    """Removal was asked for a run that is running or published in the database."""


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
    #: When the run's spec was written (seconds since the epoch), None when unknown.
    launched_at: float | None = None

    @property
    def state(self) -> str:
        """The run's state in words: running, finished, cancelled, failed or stopped (…)."""
        if not self.status and self.starting:
            return "starting"
        state = self.status.get("status", "?")
        if state in ("running", "queued") and not self.alive:
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

    @property
    def removable(self) -> bool:
        """True for a run that ended without finishing: failed, cancelled or stopped."""
        return not self.alive and self.state in REMOVABLE_STATES

    @property
    def starting(self) -> bool:
        """True for a run launched moments ago whose worker has not reported yet."""
        return not self.status and still_starting(self.launched_at)

    def progress_words(self) -> str:
        """``<state>, done/total items[, error: …]``."""
        total = self.units_total or "?"
        line = f"{self.state}, {self.units_done}/{total} items"
        return line + (f", error: {self.error}" if self.error else "")

    def summary(self) -> str:
        """One line: ``<run id>: <state>, done/total items[, error: …]``."""
        return f"{self.run_id}: {self.progress_words()}"


def list_runs(runs_dir: Path) -> list[RunProgress]:
    """Every run folder under ``runs_dir``, newest first."""
    return [RunProgress(run_id=folder.run_id, spec=folder.read_json("spec.json") or {},
                        status=folder.read_json("status.json") or {}, alive=folder.is_locked(),
                        launched_at=modified_at(folder.root / "spec.json"))
            for folder in read_run_folders(runs_dir)]


def any_active(runs: list[RunProgress]) -> bool:
    """True while some run is being worked on, or was launched moments ago."""
    return bool(working_runs(runs))


def working_runs(runs: list[RunProgress]) -> list[str]:
    """The ids of the runs being worked on, or launched moments ago (not those queued)."""
    return [run.run_id for run in runs
            if (run.alive and run.state != "queued") or run.starting]


def queued_runs(runs: list[RunProgress]) -> list[str]:
    """The ids of the runs waiting for a slot (``workflows.runs.slots``)."""
    return [run.run_id for run in runs if run.alive and run.state == "queued"]


class TooManyRuns(ValueError):
    """A launch was asked while as many runs as allowed were already working or queued."""


def check_capacity(runs_dir: Path, limit: int) -> None:
    """Raise TooManyRuns when ``limit`` runs already work in ``runs_dir`` (for launches that
    do not queue: a live CAT)."""
    working = working_runs(list_runs(runs_dir))
    if len(working) >= limit:
        raise TooManyRuns(f"{len(working)} run(s) already working ({', '.join(working)}); "
                          f"this dashboard runs at most {limit} at once (max_concurrent_runs "
                          "in operator.toml). Launch again when one has ended.")


def check_queue(runs_dir: Path, launching: int = 1) -> None:
    """Raise TooManyRuns when ``launching`` more runs would make more than ``MAX_QUEUED``
    wait for a slot in ``runs_dir``."""
    waiting = queued_runs(list_runs(runs_dir))
    if len(waiting) + launching > MAX_QUEUED:
        raise TooManyRuns(f"{len(waiting)} run(s) already wait for a slot "
                          f"({', '.join(waiting)}); at most {MAX_QUEUED} may wait. Launch again "
                          "when one has started.")


@dataclass(frozen=True)
class ListedRun:
    """One run as ``enem-llm runs`` lists it: its folder on this machine, its row in the
    database, or both (a local run once published)."""

    run_id: str
    folder: RunProgress | None = None
    stored: dict[str, Any] | None = None

    @property
    def where(self) -> str:
        """'run folder', 'database' or 'run folder + database'."""
        return " + ".join(place for place, held in (("run folder", self.folder),
                                                     ("database", self.stored)) if held)

    def line(self) -> str:
        """``<run id> [where]: <folder progress>; <what the database holds>``."""
        parts = [self.folder.progress_words()] if self.folder else []
        if self.stored:
            row = self.stored
            kind = ("published" if row["status"] == "finished" and row["origin"] == "local"
                    else "imported" if row["status"] == "finished"
                    else f"stored as {row['status']}")
            repetitions = (f"{row['repetitions']} {row['repetition']}s"
                           if _present(row["repetitions"]) else row["repetition"])
            settings = [f"model {row['model_id']}", f"backend {row['backend']}",
                        f"origin {row['origin']}", f"year {row['years']}",
                        f"areas {row['areas']}", f"languages {row['languages']}",
                        f"prompt {row['prompt_type'] or 'shots ' + str(row['shots'])}",
                        repetitions]
            if _present(row["temperature"]):
                settings.append(f"temperature {row['temperature']:g}")
            settings.append(f"{int(row['patterns']):,} patterns")
            if _present(row.get("unparsed")) and row["unparsed"] > 0:
                settings.append(f"{int(row['unparsed']):,} unparsed answers")
            parts.append(f"{kind} as \"{row['series']}\" ({', '.join(settings)})")
        return f"{self.run_id} [{self.where}]: {'; '.join(parts)}"


def _present(value: Any) -> bool:
    return not pd.isna(value)


def list_all_runs(db_path: Path, runs_dir: Path) -> list[ListedRun]:
    """Every run folder under ``runs_dir`` (newest first) and every run the database at
    ``db_path`` holds (newest first; none when there is no database), each once."""
    folders = {run.run_id: run for run in list_runs(runs_dir)}
    stored: dict[str, dict[str, Any]] = {}
    if Path(db_path).exists():
        with connected(Path(db_path), read_only=True) as con:
            stored = {row["run_id"]: row for row in stored_runs(con).to_dict("records")}
    listed = [ListedRun(run_id, folder, stored.get(run_id)) for run_id, folder in folders.items()]
    listed += [ListedRun(run_id, None, row) for run_id, row in stored.items()
               if run_id not in folders]
    return listed


def _check_run_id(run_id: str) -> None:
    """ValueError unless ``run_id`` can name a run folder (one plain name, no path)."""
    if not run_id or Path(run_id).name != run_id or run_id in (".", ".."):
        raise ValueError(f"{run_id!r} is not a run id")


def remove_run(run_id: str, db_path: Path, runs_dir: Path) -> str:
    """Remove a run that ended without being published: its folder under ``runs_dir`` and any
    of its rows in the database that are not a published run. Returns the sentence to show.

    Raises RunNotRemovable for a run that a process is working on or that is published in
    the database (those are never removed here), FileNotFoundError when neither the folder
    nor the database knows ``run_id``.

    Killed at any moment, it can be run again: the folder is renamed away in one step before
    it is deleted (``workflows.runs.folder.remove_run_folder``), and the next ``remove_run``
    of the run deletes what such a killed removal left.
    """
    _check_run_id(run_id)
    folder = RunFolder(Path(runs_dir) / run_id)
    # A removal of this run killed halfway left the rest of its folder as a tombstone; it had
    # passed the checks below, so finishing it needs none.
    finished = finish_removal(runs_dir, run_id)
    has_folder = (folder.root / "spec.json").is_file()
    presence: dict[str, object] = {"published": False, "rows": 0, "status": None}
    if Path(db_path).exists():
        with connected(Path(db_path), read_only=True) as con:
            presence = run_presence(con, run_id)
    if presence["published"]:
        raise RunNotRemovable(f"run {run_id} is published in the database ({presence['rows']:,} "
                              "rows); it is not removed")
    if not has_folder and not presence["rows"]:
        if finished:
            return (f"removed run {run_id}: the rest of its folder, left by a removal that was "
                    "interrupted")
        raise FileNotFoundError(f"no run {run_id} in {runs_dir} or in the database {db_path}")
    removed_rows = 0
    if has_folder:
        # Holding the run's lock while deleting: no process can start working on it meanwhile.
        try:
            folder.acquire()
        except RunBusyError:
            raise RunNotRemovable(f"run {run_id} is running; cancel it first "
                                  f"(`enem-llm cancel {run_id}`)") from None
        try:
            if presence["rows"]:
                with connected(Path(db_path)) as con:
                    removed_rows = delete_unpublished_rows(con, run_id)
            remove_run_folder(folder)
        finally:
            folder.release()
    else:
        with connected(Path(db_path)) as con:
            removed_rows = delete_unpublished_rows(con, run_id)
    done = [f"its folder {folder.root}"] if has_folder else []
    if removed_rows:
        done.append(f"{removed_rows:,} unpublished rows from the database")
    return f"removed run {run_id}: {' and '.join(done)}"


@dataclass(frozen=True)
class LaunchedRun:
    """A run or live CAT started in the background: its id, the pid of its process and its
    run folder (where its ``log.txt``, status and lock are)."""

    run_id: str
    pid: int
    folder: Path


def start_in_background(spec: RunSpec, db_path: Path, runs_dir: Path,
                        batch_items: int = BATCH_ITEMS, slots: int | None = None
                        ) -> LaunchedRun:
    """Start ``spec`` as a separate process and return at once; its output goes to the run
    folder's ``log.txt``. The spec is written to the folder first, so the worker and any later
    resume read exactly this spec (a different spec already there is refused). A spec that
    cannot work (``check_run``: no key, no such year, a booklet of another area) is refused
    with ValueError before any folder or process exists. With ``slots`` the worker first
    waits, queued, until fewer than ``slots`` queued launches work (``workflows.runs.slots``)."""
    check_run(spec, db_path)
    folder = RunFolder(Path(runs_dir) / spec.run_id)
    claim_spec(folder, spec)
    command = [sys.executable, "-m", "workflows.runs.worker", "--db", str(db_path),
               "--runs-dir", str(runs_dir), "--batch-items", str(int(batch_items)), spec.run_id]
    if slots is not None:
        command[-1:-1] = ["--slots", str(int(slots))]
    worker = start_detached(command, folder.root / "log.txt")
    return LaunchedRun(spec.run_id, worker.pid, folder.root)


def cancel(run_id: str, runs_dir: Path) -> str:
    """Ask a live run to stop after its current batch; returns the sentence to show.

    Raises RunNotRunning when no process is working on the run, FileNotFoundError when
    ``runs_dir`` holds no run ``run_id`` (bad input, as for :func:`remove_run`).
    """
    _check_run_id(run_id)
    folder = RunFolder(Path(runs_dir) / run_id)
    if not (folder.root / "spec.json").is_file():
        raise FileNotFoundError(f"no run {run_id} in {runs_dir}")
    status = folder.read_json("status.json")
    if not status or not folder.is_locked():
        raise RunNotRunning(f"run {run_id} is not running")
    os.kill(int(status["pid"]), signal.SIGTERM)
    return (f"asked run {run_id} (pid {status['pid']}) to stop (within one request for "
            "the openai backend, else after its current batch)")


def command_line(spec: RunSpec, db_path: Path, prompt_variants: Sequence[str] = (),
                 temperatures: Sequence[float] = ()) -> str:
    """The command that makes the same run (the same run id) in a terminal, runnable as
    printed from any folder: the full path of the project's ``enem-llm`` and of the database,
    shell-quoted. ``prompt_variants`` and ``temperatures`` (several: a sweep, one run each)
    replace the spec's own."""
    words = [*project_command(), "--db", str(Path(db_path).absolute()), "run",
             "--backend", spec.backend, "--year", str(spec.year), "--areas", *spec.areas,
             "--languages", *spec.languages, "--shots", *map(str, spec.shots),
             "--shuffles", str(spec.n_shuffles), "--seed", str(spec.seed)]
    if spec.model and (spec.model != RANDOM_BASELINE or spec.backend != "random"):
        words += ["--model", spec.model]
    if spec.lc_language != 1:
        words += ["--lc-language", str(spec.lc_language)]
    variants = list(prompt_variants) or [spec.prompt_variant]
    if variants != [BASE_VARIANT]:
        words += ["--prompt-variants", *variants]
    for area, booklet in sorted(spec.booklets.items()):
        words += ["--booklet", f"{area}={booklet}"]
    options = spec.backend_options
    for flag, value in (("--gguf-file", options.get("gguf_file")),
                        ("--device", options.get("device")),
                        ("--batch-size", options.get("batch_size")),
                        ("--base-url", options.get("base_url")),
                        ("--request-timeout", options.get("timeout")),
                        ("--concurrency", options.get("concurrency")),
                        ("--answer-method", options.get("answer_method")),
                        ("--temperature", None if len(temperatures) > 1
                         else options.get("temperature")),
                        ("--max-new-tokens", options.get("max_new_tokens")),
                        ("--family", spec.family), ("--model-name", spec.model_name)):
        if value is not None and value != "":
            words += [flag, str(value)]
    if len(temperatures) > 1:
        words += ["--temperature", *(f"{t:g}" for t in temperatures)]
    if spec.instruction_tuned is not None:
        words.append("--instruction-tuned" if spec.instruction_tuned
                     else "--no-instruction-tuned")
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
