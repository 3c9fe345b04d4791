"""The background process of a run: ``python -m workflows.run_worker --db DB --runs-dir DIR RUN_ID``.

Started by ``workflows.runs.start_in_background``; it reads the spec that the service wrote into
the run folder and executes it (resuming whatever the folder already holds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inference.plan import RunSpec
from workflows.run_execution import RunCancelled, execute_run
from workflows.run_folder import RunFolder


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
        return 130
    print(f"run {outcome.run_id} {outcome.status}: {outcome.units_done}/{outcome.units_total} "
          f"items in {outcome.seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
