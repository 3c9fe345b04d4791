"""The background process of a run: ``python -m workflows.runs.worker --db DB --runs-dir DIR
RUN_ID``.

Started by ``workflows.runs.service.start_in_background``; it reads the spec that the service wrote
into the run folder and executes it (resuming whatever the folder already holds). Its output goes to
the folder's ``log.txt``.

``enem-llm cancel`` sends it SIGTERM. ``execute_run`` (in this process's main thread) turns it
into a stop event that the backend checks between requests, so the run stops within one
request: the unfinished batch is discarded, the finished ones are kept, the status says
'cancelled' and the worker exits 130 at once, without waiting for the answers of requests
still in flight (a hanging endpoint would hold it for the request timeout). A run that cannot
go on ends with one ``error:`` line and exit 1 (a backend failure; a run with too many answers
without a letter, not published).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from inference.backends import ScoringError
from inference.plan import RunSpec
from workflows.runs.execution import RunCancelled, execute_run
from workflows.runs.folder import RunBusyError, RunFolder
from workflows.runs.slots import RunSlot, wait_for_slot

#: The worker's exit code for a cancelled run.
CANCELLED_EXIT = 130


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--runs-dir", required=True)
    parser.add_argument("--batch-items", type=int, required=True)
    parser.add_argument("--slots", type=int, default=None,
                        help="wait for one of this many run slots first (the dashboard's "
                             "queue, workflows.runs.slots)")
    parser.add_argument("run_id")
    args = parser.parse_args(argv)
    folder = RunFolder(Path(args.runs_dir) / args.run_id)
    spec = folder.read_json("spec.json")
    if spec is None:
        print(f"error: run folder {args.run_id} has no spec.json", file=sys.stderr)
        return 2
    try:
        slot = (wait_in_queue(folder, Path(args.runs_dir), args.slots)
                if args.slots else None)
        outcome = execute_run(RunSpec.from_dict(spec), Path(args.db), Path(args.runs_dir),
                              batch_items=args.batch_items)
    except RunCancelled as stopped:
        print(stopped, file=sys.stderr)
        return CANCELLED_EXIT
    except (ScoringError, RunBusyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if slot is not None:
        slot.release()
    print(f"run {outcome.run_id} {outcome.status}: {outcome.units_done}/{outcome.units_total} "
          f"items in {outcome.seconds:.1f} s")
    return 0


def wait_in_queue(folder: RunFolder, runs_dir: Path, slots: int) -> RunSlot:
    """Hold the run (alive, cancellable, status 'queued' while it waits) until one of
    ``slots`` run slots is free, then hand the run to ``execute_run`` with the slot held.
    SIGTERM while waiting (``enem-llm cancel``, the Runs page's Cancel) ends it as cancelled;
    RunBusyError when another process works on the same run."""
    folder.acquire()

    def cancelled(signum: int, frame: object) -> None:
        raise RunCancelled(f"run {folder.run_id} cancelled while queued")

    previous = signal.signal(signal.SIGTERM, cancelled)
    try:
        return wait_for_slot(runs_dir, slots, waiting=lambda: folder.update_status(
            status="queued", pid=os.getpid(), units_done=0))
    except RunCancelled:
        folder.update_status(status="cancelled", pid=os.getpid())
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        folder.release()  # execute_run takes the run's lock again at once


def exit_now(code: int) -> None:
    """End the process with ``code``. A cancelled run ends at once: its status and folder are
    written and released, and the interpreter's normal exit would wait for the backend's pool
    threads, whose requests in flight may hang until the request timeout."""
    if code != CANCELLED_EXIT:
        sys.exit(code)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
