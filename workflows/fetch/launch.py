"""Start a fetch in the background, as the Runs page starts a run: a separate process running
the ``enem-llm fetch`` command line a person would type (started by ``workflows.background``),
writing its phases to a progress file that the page reads back.

Everything lives in one folder beside the store, ``<db>.fetch/``: ``progress.json`` (the
fetch's state, ``workflows.fetch.progress``), its lock (held by the working fetch) and
``log.txt`` (the command's output). One fetch at a time per store: a launch is refused while
the lock is held, or while the last launch has not yet taken it (it counts as starting for
``workflows.background.STARTING_SECONDS``).

What may be launched is a :class:`FetchRequest`: a source this module knows, a year from
:data:`~workflows.fetch.sources.INEP_YEARS` and a switch, never free text; the store is the
caller's own path.
"""

from __future__ import annotations

import fcntl
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from workflows.background import Detached, project_command, start_detached, still_starting
from workflows.fetch.progress import (
    FetchBusyError,
    FetchProgress,
    is_locked,
    read_progress,
    write_json_atomically,
)
from workflows.fetch.sources import INEP_YEARS

FOLDER_SUFFIX = ".fetch"
PROGRESS_FILE = "progress.json"
LOG_FILE = "log.txt"
#: Held for the moments a launch checks the folder and starts the process, so two launches at
#: once cannot both find it idle.
LAUNCH_LOCK = "launch.lock"
#: The sources a background fetch may take (``fetch texts`` needs booklets chosen by hand).
LAUNCHABLE = ("inep", "paper")


@dataclass(frozen=True)
class FetchRequest:
    """One fetch to launch: ``inep`` (one year, optionally its items only) or ``paper``."""

    source: str
    year: int | None = None
    items_only: bool = False

    def __post_init__(self) -> None:
        if self.source not in LAUNCHABLE:
            raise ValueError(f"cannot launch a fetch of {self.source!r}; expected one of "
                             f"{', '.join(LAUNCHABLE)}")
        if self.source == "inep" and self.year not in INEP_YEARS:
            raise ValueError(f"INEP year {self.year!r} is not one of "
                             f"{INEP_YEARS[0]}–{INEP_YEARS[-1]}")
        if self.source == "paper" and (self.year is not None or self.items_only):
            raise ValueError("the paper's fetch takes no year and no items-only switch")

    def arguments(self) -> list[str]:
        """The words after ``enem-llm``: ``fetch inep --year 2022 [--items-only]``."""
        if self.source == "paper":
            return ["fetch", "paper"]
        words = ["fetch", "inep", "--year", str(self.year)]
        return words + (["--items-only"] if self.items_only else [])

    @property
    def label(self) -> str:
        """The fetch in a few words, e.g. ``INEP 2022 (items only)``."""
        if self.source == "paper":
            return "the seed paper's results"
        return f"INEP {self.year}" + (" (items only)" if self.items_only else "")


def fetch_folder(db_path: Path) -> Path:
    """The folder of the store's background fetch: ``<db>.fetch`` beside the store."""
    db_path = Path(db_path).absolute()
    return db_path.with_name(db_path.name + FOLDER_SUFFIX)


def fetch_command(request: FetchRequest, db_path: Path) -> list[str]:
    """The words the background process runs: the terminal command plus the progress file
    and ``--quiet`` (the log wants no progress bars)."""
    folder = fetch_folder(db_path)
    return [*project_command(), *request.arguments(), "--db", str(Path(db_path).absolute()),
            "--progress-file", str(folder / PROGRESS_FILE), "--quiet"]


def terminal_command(request: FetchRequest, db_path: Path | None = None,
                     program: str | None = None) -> str:
    """The command a person types for ``request``, shell-quoted: this installation's
    ``enem-llm`` (or ``program``) with ``--db`` when ``db_path`` is given."""
    words = [program] if program else project_command()
    words = [*words, *request.arguments()]
    if db_path is not None:
        words += ["--db", str(Path(db_path).absolute())]
    return shlex.join(words)


@dataclass(frozen=True)
class FetchJob:
    """The store's background fetch as a page reports it: its last progress (None: none was
    ever launched), whether its process holds the lock, and its state in a word: ``none``,
    ``starting``, ``working``, ``done``, ``failed`` or ``stopped`` (the process went away
    without saying how it ended)."""

    progress: FetchProgress | None
    alive: bool
    state: str
    log: Path

    @property
    def working(self) -> bool:
        """True while the fetch starts or works: another one may not be launched."""
        return self.state in ("starting", "working")


def fetch_job(db_path: Path) -> FetchJob:
    """The state of the store's background fetch, read from its folder."""
    folder = fetch_folder(db_path)
    progress = read_progress(folder / PROGRESS_FILE)
    alive = is_locked(folder / PROGRESS_FILE)
    return FetchJob(progress, alive, _state(progress, alive), folder / LOG_FILE)


def _state(progress: FetchProgress | None, alive: bool) -> str:
    if progress is None:
        return "working" if alive else "none"
    if progress.final:
        return progress.phase
    if alive:
        return "working"
    if progress.pid is None:
        # Written by the launch, not yet by the process (which writes its pid): it is on its
        # way, or it ended before it took the lock (its log says why).
        return "starting" if still_starting(progress.updated_at) else "failed"
    return "stopped"


@contextmanager
def _launching(folder: Path) -> Iterator[None]:
    """The launch lock of ``folder``, held for the block (waits for a launch under way)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LAUNCH_LOCK, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def start_fetch_in_background(request: FetchRequest, db_path: Path) -> Detached:
    """Start ``enem-llm fetch`` for ``request`` into the store at ``db_path`` as its own
    process and return at once; FetchBusyError while another fetch of this store starts or
    works."""
    folder = fetch_folder(db_path)
    with _launching(folder):
        job = fetch_job(db_path)
        if job.working:
            what = job.progress.task if job.progress and job.progress.task else "a fetch"
            raise FetchBusyError(f"{what} is already under way for this store; one fetch at a "
                                 "time")
        # The page shows this until the process writes its own first state; the previous
        # fetch's outcome must not show as this one's.
        starting = _launch_record(request)
        write_json_atomically(folder / PROGRESS_FILE, starting.as_dict())
        try:
            return start_detached(fetch_command(request, db_path), folder / LOG_FILE)
        except OSError as error:
            failed = replace(starting, phase="failed", history=("starting", "failed"),
                             message=f"the fetch could not start: {error}")
            write_json_atomically(folder / PROGRESS_FILE, failed.as_dict())
            raise


def _launch_record(request: FetchRequest) -> FetchProgress:
    """The state the launch writes: ``starting``, with no pid (the process writes its own)."""
    now = time.time()
    return FetchProgress("starting", task=request.label, history=("starting",),
                         started_at=now, phase_started_at=now, updated_at=now)
