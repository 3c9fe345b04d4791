"""import-results benchmark: peak memory of importing a large results file in the paper's layout.

    python -m bench.import_memory [--rows 1000000] [--batch-rows N]

Writes (under bench/out/import_memory/) a store holding a generated 2023 year's items only
(``ingest_items``) and three Parquet files in the layout of the paper's published results (the
columns of ``../shared/data/real/paper-results``), built on that store's booklets:

  valid     ``--rows`` rows: two models × four areas × two prompt languages × sampling seeds,
            each row a RESPONSE_PATTERN with its letters and published scores;
  last-bad  the same rows, the last one's RESPONSE_PATTERN one character short: refused only
            after every other row was read;
  garbage   the same number of rows, every LANGUAGE unknown: refused at the first batch.

Each measurement runs in its own child process, which reports its own peak resident memory
(``VmHWM`` of /proc/self/status: unlike ``ru_maxrss`` it does not start from the bench's own
peak, which a child inherits across fork and exec) and wall time:

  python       the interpreter with the project's modules imported, nothing read;
  read         ``pyarrow.parquet.read_table`` of the valid file (the baseline: holding the file
               once in memory);
  import       ``import_results_summary`` of each file into a copy of the store.

Prints the numbers and the import's peak as a multiple of the baseline; there are no
thresholds here or in the unit tests (``tests/test_import_streaming.py`` checks that streaming
gives the same stored rows as one batch).

Measured (2-core Linux box, 23 GB, DuckDB 2.0.0, 1,000,000 rows, 63.5 MB file; baseline: read
668–685 MB peak):

    before (whole file in pandas)   valid 12,278 MB, 196 s   last-bad 8,320 MB, 100 s
                                    garbage 2,255 MB, 26 s
    after (batches of 20,000 rows)  valid  1,359 MB, 111 s   last-bad   449 MB,  15 s
                                    garbage   368 MB, 0.2 s
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.rejects import child_measurement
from demo import generate_demo_files
from store.connection import connected
from store.layout import copy_store, remove_store
from testbed.paper_results import YEAR, paper_forms, paper_results_table
from workflows.ingest import ingest_items

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "import_memory"

#: Child code: run one measurement, print {"seconds", "peak_mb", "result"} as JSON.
_CHILD = """
import json, resource, sys, time
mode, path, db = sys.argv[1:4]
batch_rows = int(sys.argv[4]) if len(sys.argv) > 4 else None
import pyarrow.parquet as pq
from store.connection import connected
from workflows import results_io
started = time.monotonic()
if mode == "python":
    result = "modules imported"
elif mode == "read":
    table = pq.read_table(path)
    result = f"{table.num_rows:,} rows, {table.nbytes / 2**20:,.0f} MB in Arrow"
else:
    options = {} if batch_rows is None else {"batch_rows": batch_rows}
    try:
        with connected(db) as con:
            summary = results_io.import_results_summary(con, path, **options)
        result = f"imported {summary.rows:,} rows in {len(summary.runs)} runs"
    except ValueError as error:
        result = "refused: " + str(error)[:160]
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:  # VmHWM restarts at exec; ru_maxrss keeps the parent's peak from before the fork
    with open("/proc/self/status") as status:
        peak_mb = next(int(line.split()[1]) for line in status
                       if line.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    pass
print(json.dumps({"seconds": time.monotonic() - started, "peak_mb": peak_mb, "result": result}))
"""


def bench_store() -> Path:
    """A store with the generated year's items only (cached)."""
    db = OUT / "items.duckdb"
    if not db.exists():
        files = generate_demo_files(OUT / "source", year=YEAR, n_examinees=1000, seed=3,
                                    progress=False)
        ingest_items(db, YEAR, files.items)
    return db


def write_files(db: Path, n_rows: int) -> dict[str, Path]:
    """The valid, last-bad and garbage files of ``n_rows`` rows (written afresh)."""
    with connected(db, read_only=True) as con:
        forms = paper_forms(con)
    table = paper_results_table(forms, n_rows)
    paths = {name: OUT / f"{name}_{n_rows}.parquet" for name in ("valid", "last-bad", "garbage")}
    pq.write_table(table, paths["valid"])
    patterns = table["RESPONSE_PATTERN"].to_pylist()
    patterns[-1] = patterns[-1][:-1]
    pq.write_table(table.set_column(table.schema.get_field_index("RESPONSE_PATTERN"),
                                    "RESPONSE_PATTERN", pa.array(patterns)), paths["last-bad"])
    pq.write_table(table.set_column(table.schema.get_field_index("LANGUAGE"), "LANGUAGE",
                                    pa.array(["klingon"] * n_rows)), paths["garbage"])
    return paths


def measure(mode: str, path: Path, db: Path, batch_rows: int | None) -> dict:
    """One measurement in a child process (the import writes into a copy of ``db``)."""
    work = OUT / "work.duckdb"
    remove_store(work)
    copy_store(db, work)
    command = [sys.executable, "-c", _CHILD, mode, str(path), str(work)]
    if batch_rows:
        command.append(str(batch_rows))
    return child_measurement(command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of each file")
    parser.add_argument("--batch-rows", type=int, help="rows per batch of the import "
                                                       "(default: the importer's)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    db = bench_store()
    paths = write_files(db, args.rows)
    size = paths["valid"].stat().st_size / 2**20
    print(f"{args.rows:,} rows in the paper's layout; valid file {size:,.1f} MB on disk")
    rows = [("python", "python", paths["valid"]), ("read (baseline)", "read", paths["valid"])]
    rows += [(f"import {name}", "import", path) for name, path in paths.items()]
    results = {}
    for label, mode, path in rows:
        results[label] = measure(mode, path, db, args.batch_rows)
        found = results[label]
        print(f"  {label:<18} {found['peak_mb']:>8,.0f} MB peak  {found['seconds']:>7.1f} s  "
              f"{found['result']}", flush=True)
    baseline = results["read (baseline)"]["peak_mb"]
    for label in (f"import {name}" for name in paths):
        print(f"  {label}: {results[label]['peak_mb'] / baseline:.2f} × the baseline's peak")


if __name__ == "__main__":
    main()
