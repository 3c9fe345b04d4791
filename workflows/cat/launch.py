"""Start a live CAT in the background, as the Runs page starts a run: a separate process
running the ``enem-llm cat-run`` command line that makes the same CAT (the same run id) in a
terminal (started by ``workflows.background``), with its output in the run folder's
``log.txt``. Its progress is the folder's ``status.json`` (written by ``workflows.cat.live``),
its liveness the folder's lock.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from analytics.cat import CatSettings
from inference.plan import RANDOM_BASELINE
from workflows.background import failed_to_start, modified_at, project_command, start_detached
from workflows.cat.live import CatRunSpec
from workflows.runs.folder import RunFolder
from workflows.runs.service import LaunchedRun

#: CAT settings written on the command line only when they differ from the defaults.
OPTIONAL_FLAGS = (("randomesque_k", "--randomesque-k"), ("se_target", "--se-target"),
                  ("start_theta", "--start-theta"), ("grid_points", "--grid-points"))


def cat_command(spec: CatRunSpec, db_path: Path, runs_dir: Path | None = None) -> list[str]:
    """The words of the ``enem-llm cat-run`` call that makes ``spec``: runnable as printed
    from any folder (full paths of the project's ``enem-llm`` and of the database)."""
    settings = spec.cat_settings
    if settings.constant_patterns != CatSettings().constant_patterns:
        raise ValueError("cat-run has no option for ML's constant-pattern rule "
                         f"{settings.constant_patterns!r}")
    words = [*project_command(), "--db", str(Path(db_path).absolute()), "cat-run",
             "--backend", spec.backend, "--year", str(spec.year), "--areas", *spec.areas,
             "--language", spec.language, "--shots", str(spec.shots),
             "--paths", str(spec.n_paths), "--seed", str(spec.seed),
             "--selector", settings.selector, "--estimator", settings.estimator,
             "--max-items", str(settings.max_items)]
    if spec.model and (spec.model != RANDOM_BASELINE or spec.backend != "random"):
        words += ["--model", spec.model]
    if spec.model_name:
        words += ["--model-name", spec.model_name]
    for option, flag in (("device", "--device"), ("base_url", "--base-url"),
                         ("timeout", "--request-timeout")):
        if spec.backend_options.get(option):
            words += [flag, f"{spec.backend_options[option]:g}" if option == "timeout"
                      else str(spec.backend_options[option])]
    defaults = CatSettings()
    for field, flag in OPTIONAL_FLAGS:
        value = getattr(settings, field)
        if value != getattr(defaults, field):
            words += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if settings.theta_range != defaults.theta_range:
        words += ["--theta-range", *(f"{bound:g}" for bound in settings.theta_range)]
    if runs_dir is not None:
        words += ["--runs-dir", str(Path(runs_dir).absolute())]
    return words


def cat_command_line(spec: CatRunSpec, db_path: Path, runs_dir: Path | None = None) -> str:
    """:func:`cat_command`, shell-quoted."""
    return shlex.join(cat_command(spec, db_path, runs_dir))


@dataclass(frozen=True)
class CatState:
    """A live CAT's run folder as the page reports it."""

    run_id: str
    state: str
    answers: int
    most: int
    error: str | None
    alive: bool

    def words(self) -> str:
        """e.g. ``running: 12 of at most 80 answers`` or ``failed: ValueError: …``."""
        line = f"{self.state}: {self.answers} of at most {self.most} answers"
        return line + (f"; {self.error}" if self.error else "")


def cat_state(run_id: str, runs_dir: Path) -> CatState:
    """The state of one CAT's folder: starting (no status yet, launched moments ago), running,
    finished, failed, or stopped (its status says running but no process holds it)."""
    folder = RunFolder(Path(runs_dir) / run_id)
    status = folder.read_json("status.json") or {}
    alive = folder.is_locked()
    state = status.get("status") or "starting"
    # The log's last change (its creation at the first launch, then the process's output)
    # is the latest sign of the process: no status, no live process and a log untouched for
    # longer than the starting window mean it ended before it wrote a status.
    if (state == "starting" and not alive
            and failed_to_start(modified_at(folder.root / "log.txt"))):
        state = "failed: the process ended without a status; see its log"
    elif state == "running" and not alive:
        state = "stopped: the process is gone; launch it again to resume"
    return CatState(run_id, state, int(status.get("units_done") or 0),
                    int(status.get("units_total") or 0), status.get("error"), alive)


def start_cat_in_background(spec: CatRunSpec, db_path: Path, runs_dir: Path) -> LaunchedRun:
    """Start ``cat-run`` for ``spec`` as its own process and return at once. Refused
    (ValueError) while a process works on the same CAT or when its folder holds another
    spec; a finished CAT launched again only re-stores its paths."""
    folder = RunFolder(Path(runs_dir) / spec.run_id)
    if folder.is_locked():
        raise ValueError(f"CAT {spec.run_id} is already running")
    existing = folder.read_json("spec.json")
    if existing is not None and CatRunSpec.from_dict(existing) != spec:
        raise ValueError(f"run folder {folder.root} holds a different spec")
    command = cat_command(spec, db_path, runs_dir)
    folder.root.mkdir(parents=True, exist_ok=True)
    # The status of an earlier attempt would show until the new process writes its own.
    (folder.root / "status.json").unlink(missing_ok=True)
    cat_run = start_detached(command, folder.root / "log.txt")
    return LaunchedRun(spec.run_id, cat_run.pid, folder.root)
