"""The background process of a run: ``python -m workflows.run_worker --db DB --runs-dir DIR RUN_ID``.

Started by ``workflows.runs.start_in_background``; it reads the spec that the service wrote into
the run folder and executes it (resuming whatever the folder already holds). Its output goes to
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
import sys
from pathlib import Path

from inference.backends import ScoringError
from inference.plan import RunSpec
from workflows.run_execution import RunCancelled, execute_run
from workflows.run_folder import RunBusyError, RunFolder

#: The worker's exit code for a cancelled run.
CANCELLED_EXIT = 130


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--runs-dir", required=True)
    parser.add_argument("--batch-items", type=int, required=True)
    parser.add_argument("run_id")
    args = parser.parse_args(argv)
    spec = RunFolder(Path(args.runs_dir) / args.run_id).read_json("spec.json")
    if spec is None:
        print(f"error: run folder {args.run_id} has no spec.json", file=sys.stderr)
        return 2
    try:
        outcome = execute_run(RunSpec.from_dict(spec), Path(args.db), Path(args.runs_dir),
                              batch_items=args.batch_items)
    except RunCancelled as stopped:
        print(stopped, file=sys.stderr)
        return CANCELLED_EXIT
    except (ScoringError, RunBusyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"run {outcome.run_id} {outcome.status}: {outcome.units_done}/{outcome.units_total} "
          f"items in {outcome.seconds:.1f} s")
    return 0


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
