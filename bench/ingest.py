"""Ingest benchmark: full ingest + scoring of an INEP-format year vs a bare DuckDB scan.

    python -m bench.ingest [--rows 3900000] [--keep]

Writes (once, cached under bench/out/) a synthetic year in INEP's exact format with ``--rows``
candidates, then times, in this same run:
  1. a bare DuckDB scan of the microdata CSV: every column parsed (max() over each), nothing kept;
  2. the whole ``ingest_year`` (load, score every present record, rejects, aggregates, commit)
     in a child process, whose peak resident memory is read from the OS.
Prints seconds, the ratio ingest/scan (target ≤ 2) and the peak memory (target ≤ 4 GB).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from demo import generate_demo_files
from enem.csvfiles import csv_source_sql, read_header

ROOT = Path(__file__).resolve().parent.parent

OUT = ROOT / "bench" / "out"


def ensure_files(rows: int, seed: int):
    target = OUT / f"year_{rows}"
    marker = target / "complete"
    if not marker.exists():
        print(f"writing a {rows:,}-candidate INEP-format year to {target} (once) …", flush=True)
        started = time.monotonic()
        generate_demo_files(target, year=2023, n_examinees=rows, seed=seed, progress=True)
        marker.write_text("ok")
        print(f"  generated in {time.monotonic() - started:.1f} s", flush=True)
    return target / "MICRODADOS_ENEM_2023.csv", target / "ITENS_PROVA_2023.csv"


def bare_scan_seconds(microdata: Path) -> float:
    header = read_header(microdata)
    columns = {name: "VARCHAR" for name in header}
    maxima = ", ".join(f'max("{name}")' for name in header)
    con = duckdb.connect()
    started = time.monotonic()
    con.execute(f"SELECT count(*), {maxima} FROM {csv_source_sql('latin-1')}",
                {"path": str(microdata), "columns": columns}).fetchall()
    elapsed = time.monotonic() - started
    con.close()
    return elapsed


def ingest_seconds(microdata: Path, items: Path, db: Path) -> tuple[float, float]:
    """Run the ingest in a child process; returns (seconds, peak RSS in GB)."""
    db.unlink(missing_ok=True)
    code = (
        "from workflows.ingest import ingest_year\n"
        f"s = ingest_year({str(db)!r}, 2023, {str(microdata)!r}, {str(items)!r}, progress=False)\n"
        "print('\\n'.join(s.lines()))\n"
    )
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    elapsed = time.monotonic() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, peak_kb / 1024 / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates in the year")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()
    microdata, items = ensure_files(args.rows, args.seed)
    size_gb = microdata.stat().st_size / 1e9
    print(f"microdata: {microdata.name}, {args.rows:,} rows, {size_gb:.2f} GB")
    scan = bare_scan_seconds(microdata)
    print(f"bare DuckDB scan (every column parsed): {scan:.1f} s", flush=True)
    db = OUT / "bench.duckdb"
    ingest, peak_gb = ingest_seconds(microdata, items, db)
    print(f"ingest + scoring + aggregates:            {ingest:.1f} s")
    print(f"ratio ingest / scan: {ingest / scan:.2f}×  (target ≤ 2×)")
    print(f"peak memory of the ingest process: {peak_gb:.2f} GB  (target ≤ 4 GB)")
    if not args.keep:
        db.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
