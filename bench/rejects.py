"""Rejects benchmark: memory and time of ingesting an all-malformed microdata file.

    python -m bench.rejects [--mb 45] [--scale 4] [--skip-before]

Writes (cached under bench/out/rejects/) a small generated 2023 year and, from it, a microdata
file of about ``--mb`` MB whose every data line is malformed: the header is INEP's (76 columns,
``;``) but the rows were written with ``,`` (a systematic column problem: every line has one
field). Each measurement runs in its own child process, which reports its own peak resident
memory (``ru_maxrss``) and wall time:

  before   DuckDB's read_csv with ``store_rejects`` into a rejects table, the options the ingest
           used until the line scan replaced them (one row per missing column, whole line kept);
  after    ``ingest_year`` on the same file: the line scan counts every line and the file is
           refused before the database is touched;
  after×N  the same on a file ``--scale`` times larger, to show how memory grows with the
           number of malformed lines, extrapolated to a full-size year (3.9M lines);
  scan     the line scan alone on a well-formed file of the same size (its cost on a normal
           ingest).

Prints the numbers; there are no thresholds here or in the unit tests.

Measured (2-core Linux box, 23 GB, DuckDB 2.0.0, files in the page cache):

    45 MB, 99,000 lines     before: 14,361 MB peak, 64.6 s (7,425,000 reject rows)
                            after:     320 MB peak,  0.9 s, refused
    180 MB, 399,000 lines   after:     352 MB peak,  1.1 s, refused
    1.8 GB, 3,981,000 lines after:     386 MB peak,  4.9 s, refused (``--scale 40``: a
                            full-size file measured, not extrapolated)
    1.8 GB well-formed      line scan alone: 2.6 s, 269 MB peak
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from demo import generate_demo_files

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "rejects"
FULL_SIZE_LINES = 3_900_000
SOURCE_ROWS = 3000

#: Child code: run one measurement, print {"seconds", "peak_mb", "result"} as JSON.
_CHILD = """
import json, resource, sys, time
mode, path, items, db = sys.argv[1:5]
started = time.monotonic()
if mode == "before":
    import duckdb
    from enem.csvfiles import read_header
    header = read_header(path)
    con = duckdb.connect()
    options = ("delim=';', header=true, all_varchar=true, quote='', escape='', "
               "auto_detect=false, encoding='latin-1', store_rejects=true, "
               "rejects_table='csv_rejects', rejects_scan='csv_rejects_scan'")
    con.execute(f"CREATE TABLE examinees AS SELECT * FROM read_csv($path, {options}, "
                "columns=$columns)", {"path": path, "columns": {n: "VARCHAR" for n in header}})
    rows = con.execute("SELECT count(*) FROM examinees").fetchone()[0]
    kept = con.execute("SELECT count(*), count(DISTINCT line) FROM csv_rejects").fetchone()
    result = f"{rows} rows read; rejects table: {kept[0]:,} rows for {kept[1]:,} lines"
elif mode == "after":
    from enem.csvfiles import UnusableFileError
    from workflows.ingest import ingest_year
    try:
        ingest_year(db, 2023, path, items, progress=False)
        result = "ingested (not refused!)"
    except UnusableFileError as error:
        result = "refused: " + str(error)[len(path) + 2:][:160]
else:
    from enem.csvfiles import scan_lines, read_header
    scan = scan_lines(path, len(read_header(path)))
    result = f"{scan.lines:,} lines, {scan.well_formed:,} well-formed"
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": time.monotonic() - started, "peak_mb": peak_mb, "result": result}))
"""


def source_files():
    """A small generated year (cached): its microdata rows are the material of the files."""
    target = OUT / f"source_{SOURCE_ROWS}"
    if not (target / "complete").exists():
        generate_demo_files(target, year=2023, n_examinees=SOURCE_ROWS, seed=3, progress=False)
        (target / "complete").write_text("ok")
    return target / "MICRODADOS_ENEM_2023.csv", target / "ITENS_PROVA_2023.csv"


def write_file(source: Path, target: Path, megabytes: float, malformed: bool) -> int:
    """A microdata file of about ``megabytes`` MB from ``source``'s rows; returns its lines."""
    header, *rows = source.read_bytes().rstrip(b"\n").split(b"\n")
    if malformed:
        rows = [row.replace(b";", b",") for row in rows]
    body = b"\n".join(rows) + b"\n"
    copies = max(1, round(megabytes * 1e6 / len(body)))
    with open(target, "wb") as handle:
        handle.write(header + b"\n")
        handle.writelines(body for _ in range(copies))
    return copies * len(rows)


def measure(mode: str, path: Path, items: Path) -> dict:
    db = OUT / "bench.duckdb"
    db.unlink(missing_ok=True)
    measured = child_measurement([sys.executable, "-c", _CHILD, mode, str(path), str(items),
                                  str(db)])
    db.unlink(missing_ok=True)
    return measured


def child_measurement(command: list[str]) -> dict:
    """Run a measuring child process; its last stdout line is a JSON object of what it
    measured (a failed child gives NaN timings and its error as the result)."""
    done = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        return {"seconds": float("nan"), "peak_mb": float("nan"),
                "result": f"child failed ({done.returncode}): {done.stderr.strip()[-300:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=45.0, help="size of the malformed file")
    parser.add_argument("--scale", type=int, default=4, help="size factor of the larger file")
    parser.add_argument("--skip-before", action="store_true",
                        help="skip the old strategy (it needs over 10 GB for 45 MB)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    source, items = source_files()
    small, large, valid = OUT / "malformed.csv", OUT / "malformed_large.csv", OUT / "valid.csv"
    n_small = write_file(source, small, args.mb, malformed=True)
    n_large = write_file(source, large, args.mb * args.scale, malformed=True)
    n_valid = write_file(source, valid, args.mb * args.scale, malformed=False)

    runs = []
    if not args.skip_before:
        runs.append(("before (DuckDB store_rejects)", n_small, small, "before"))
    runs += [("after (line scan, refused)", n_small, small, "after"),
             (f"after, {args.scale}× larger", n_large, large, "after"),
             ("line scan of a well-formed file", n_valid, valid, "scan")]
    results = []
    print(f"{'measurement':<34} {'lines':>10} {'MB':>7} {'seconds':>8} {'peak RSS MB':>12}")
    for label, lines, path, mode in runs:
        started = time.monotonic()
        got = measure(mode, path, items)
        size = path.stat().st_size / 1e6
        results.append((label, lines, got))
        print(f"{label:<34} {lines:>10,} {size:>7.1f} {got['seconds']:>8.2f} "
              f"{got['peak_mb']:>12.0f}   ({time.monotonic() - started:.1f} s with start-up)")
        print(f"    {got['result']}")
    small_after = next(r for label, _, r in results if label.startswith("after (line"))
    large_after = next(r for label, _, r in results if label.startswith("after,"))
    per_line_kb = ((large_after["peak_mb"] - small_after["peak_mb"]) * 1024
                   / max(1, n_large - n_small))
    projected = large_after["peak_mb"] + per_line_kb * (FULL_SIZE_LINES - n_large) / 1024
    seconds_per_line = large_after["seconds"] / n_large
    print(f"\nafter: memory grows {per_line_kb * 1024:.1f} bytes per malformed line between "
          f"{n_small:,} and {n_large:,} lines;")
    print(f"extrapolated to an all-malformed full-size file ({FULL_SIZE_LINES:,} lines): "
          f"peak ≈ {projected:.0f} MB, refused in ≈ {seconds_per_line * FULL_SIZE_LINES:.0f} s "
          "(linear extrapolation of the larger run)")
    before = next((r for label, _, r in results if label.startswith("before")), None)
    if before:
        print(f"before: {before['peak_mb'] / 1024:.1f} GB and {before['seconds']:.0f} s for "
              f"{n_small:,} lines ({before['peak_mb'] * 1024 / n_small:.0f} KB per line)")


if __name__ == "__main__":
    main()
