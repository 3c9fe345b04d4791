"""The one place that starts the project's own processes: detached jobs and waited-on jobs.

Two kinds of work must not run inside the process that asks for it:

- a **detached** job (:func:`start_detached`) outlives the request that started it: a model
  run's worker (``python -m workflows.runs.worker``) and a live CAT (``enem-llm cat-run``),
  launched from the Runs and CAT pages or ``enem-llm run --background``. It gets a session of
  its own (``start_new_session``), so a Ctrl-C in the terminal or a restart of the dashboard
  does not reach it; no stdin; its stdout and stderr appended to one log file.
- a **waited** job (:func:`run_to_end`) runs to its end while the caller waits, with its
  output captured and a time limit: work that would disturb the serving dashboard if it ran
  inside it (capturing pages with Streamlit's ``AppTest`` replaces the process's Streamlit
  runtime).
- an **attached** child (:func:`start_attached`) shares the caller's terminal and session and
  lives as long as the caller wants: the Streamlit server ``make run``'s launcher
  (``dashboard.serve``) starts, prints beside and stops.

Both run from the project root (``store.connection.PROJECT_ROOT``), so ``python -m …`` finds
the project's packages whatever folder the caller was started from.

A detached job is followed by what it writes (a run folder's ``status.json`` and lock, see
``workflows.runs.folder``), since the process that launched it (a dashboard rerun) is gone by
the time anyone asks. Until the job has written anything it counts as starting for
:data:`STARTING_SECONDS` after its launch (:func:`still_starting`); a job with nothing written
after that window and no live process failed to start (:func:`failed_to_start`). The
:class:`Detached` handle answers the same questions directly for the caller that still holds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store.connection import PROJECT_ROOT

#: Seconds after its launch a detached job that has written no status yet counts as starting
#: (a model run's worker loads the model and the exam first); after that, with no live
#: process, it failed to start.
STARTING_SECONDS = 60.0


def project_command() -> list[str]:
    """How to call this installation's ``enem-llm``: the script beside the interpreter (the
    project's ``.venv/bin/enem-llm``), else the interpreter running the ``cli`` module."""
    script = Path(sys.executable).with_name("enem-llm")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "cli"]


@dataclass(frozen=True)
class Detached:
    """A detached job just started: its process id and the log file its output goes to.

    ``process`` is the handle of the child for the caller that started it; a later caller
    (another dashboard rerun) only has what the job writes.
    """

    pid: int
    log: Path
    process: subprocess.Popen = field(repr=False, compare=False)

    def exit_code(self) -> int | None:
        """The job's exit status once it has ended, else None (it is still running)."""
        return self.process.poll()

    @property
    def alive(self) -> bool:
        """True while the job's process runs."""
        return self.exit_code() is None

    def wait_started(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the job to end early: its exit status when it ended in
        that time (a command that cannot start ends at once), None when it still runs."""
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None


def start_detached(command: Sequence[str], log: Path, *, cwd: Path = PROJECT_ROOT,
                   env: Mapping[str, str] | None = None) -> Detached:
    """Start ``command`` as a detached process and return at once.

    Parameters
    ----------
    command : sequence of str
        The program and its arguments (no shell).
    log : Path
        File the job's stdout and stderr are appended to (created when missing; an earlier
        attempt's output is kept above the new one). Its folder must exist.
    cwd : Path
        Working directory of the job; the project root by default.
    env : mapping of str to str, optional
        The job's whole environment; the caller's when None.

    Returns
    -------
    Detached
        The job's pid, log file and process handle.

    Raises
    ------
    OSError
        When the program cannot be executed (FileNotFoundError for a missing program).
    """
    log = Path(log)
    with open(log, "ab") as out:
        # Its own session: a signal to the caller's process group (Ctrl-C, a dashboard
        # restart) does not stop the job. The child keeps its own copy of the log's handle.
        process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   cwd=cwd, env=None if env is None else dict(env))
    return Detached(process.pid, log, process)


#: A child started by :func:`start_attached` (the caller polls, waits for and stops it).
Attached = subprocess.Popen


def start_attached(command: Sequence[str], env: Mapping[str, str], *,
                   cwd: Path = PROJECT_ROOT) -> Attached:
    """Start ``command`` in this process's session, with its terminal (stdin, stdout, stderr)
    and environment ``env``: a Ctrl-C in the terminal reaches it too, and the caller stops it
    (``terminate``) when it is stopped itself."""
    return subprocess.Popen(list(command), cwd=cwd, env=dict(env))


def run_to_end(command: Sequence[str], timeout: float, *, cwd: Path = PROJECT_ROOT
               ) -> subprocess.CompletedProcess:
    """Run ``command`` as its own process and wait for it, at most ``timeout`` seconds.

    Returns the finished process with its stdout and stderr as text (a non-zero exit is
    returned, not raised: the caller decides what it means). Raises
    ``subprocess.TimeoutExpired`` when it runs longer (the process is killed).
    """
    return subprocess.run(list(command), capture_output=True, text=True, check=False,
                          timeout=timeout, cwd=cwd)


def modified_at(path: Path) -> float | None:
    """When ``path`` was last modified (seconds since the epoch), None when it does not exist:
    a detached job's launch moment, read from a file written at its launch."""
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None


def _seconds_since(moment: float | None) -> float:
    return float("inf") if moment is None else time.time() - moment


def still_starting(launched_at: float | None) -> bool:
    """True when a job launched at ``launched_at`` (seconds since the epoch; None: unknown)
    is within :data:`STARTING_SECONDS` of its launch."""
    return _seconds_since(launched_at) < STARTING_SECONDS


def failed_to_start(launched_at: float | None) -> bool:
    """True when a job launched at ``launched_at`` (None: unknown, counted as long ago) is
    past :data:`STARTING_SECONDS` since its launch: one that has written nothing by then and
    has no live process failed to start."""
    return _seconds_since(launched_at) > STARTING_SECONDS
