"""Ingest benchmark: full ingest + scoring of an INEP-format year vs a bare DuckDB scan.

    python -m bench.ingest [--rows 3900000] [--keep]
    python -m bench.ingest --dump DIR [--rows 400000]      # tables of a few ingests, sorted
    python -m bench.ingest --compare DIR_BEFORE DIR_AFTER  # identical, table by table?

Writes (once, cached under bench/out/) a synthetic year in INEP's exact format with ``--rows``
candidates, then times, in this same run:
  1. a bare DuckDB scan of the microdata CSV: every column parsed (max() over each), nothing kept;
  2. the whole ``ingest_year`` (load, score every present record, rejects, aggregates, commit)
     in a child process, whose peak resident memory is read from the OS.
Prints seconds, the ratio ingest/scan (target ≤ 3, moonshot 2) and the peak memory (target
≤ 4 GB). Both read the file from the page cache: the scan runs twice and the second is timed.
Then where the ingest's time went: user and system CPU seconds of the ingest with its workers,
and wall-clock and CPU seconds per phase (``workflows.ingest_timing``), each with its share of
the CPU seconds, the scoring workers' steps (scoring, item statistics, histograms,
populations) included.

``--dump`` ingests the ``--rows`` year and small damaged years (duplicate ids, malformed lines,
bad presence codes, unknown booklets, wrong string lengths and marks; 2019's 50-character LC
strings; 2024's RESULTADOS layout) and writes every year table ``ORDER BY ALL`` to Parquet, with
the summary lines. Run it with the code before and after a change and ``--compare`` the two
folders: a speed-up must leave every row and count exactly as it was.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np

from demo import generate_demo_files
from enem.csvfiles import csv_source_sql, read_header
from store.connection import open_reader
from store.layout import remove_store
from store.schema import YEAR_PART_TABLES
from workflows.ingest import ingest_year

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
    """Seconds of the bare scan, the second of two runs: the first brings the file into the
    page cache, where the ingest then finds it too (a cold first read is disk time, which
    varies from run to run and machine to machine)."""
    header = read_header(microdata)
    columns = {name: "VARCHAR" for name in header}
    maxima = ", ".join(f'max("{name}")' for name in header)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    elapsed = []
    for _ in range(2):
        started = time.monotonic()
        con.execute(f"SELECT count(*), {maxima} FROM {csv_source_sql('latin-1')}",
                    {"path": str(microdata), "columns": columns}).fetchall()
        elapsed.append(time.monotonic() - started)
    con.close()
    print(f"bare DuckDB scan, first (cold) run: {elapsed[0]:.1f} s")
    return elapsed[1]


def ingest_seconds(microdata: Path, items: Path, db: Path) -> tuple[float, float, list[str]]:
    """Run the ingest in a child process; returns (seconds, peak RSS in GB, lines saying where
    the time went: the child's user and system CPU seconds, then its phases)."""
    db.unlink(missing_ok=True)
    code = (
        "from workflows.ingest import ingest_year\n"
        f"s = ingest_year({str(db)!r}, 2023, {str(microdata)!r}, {str(items)!r}, progress=False)\n"
        "print('\\n'.join(s.lines()))\n"
        f"print({PHASES_MARK!r})\n"
        "print('\\n'.join(s.timing.lines()))\n"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary, phases = run.stdout.split(PHASES_MARK + "\n")
    print(summary, end="", flush=True)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    cpu = (f"  CPU seconds of the ingest and its workers: {user:.1f} user + {system:.1f} system"
           f" = {user + system:.1f} in {elapsed:.1f} s ({(user + system) / elapsed:.2f} cores"
           " busy on average)")
    return elapsed, after.ru_maxrss / 1024 / 1024, [cpu, *phases.rstrip("\n").split("\n")]


PHASES_MARK = "-- phases --"


def _damaged_copy(microdata: Path, target: Path, seed: int) -> Path:
    """A copy of a small year with every kind of bad row the ingest counts."""
    lines = microdata.read_bytes().decode("latin-1").rstrip("\n").split("\n")
    header, rows = lines[0].split(";"), lines[1:]
    col = {name: i for i, name in enumerate(header)}
    rng = random.Random(seed)
    out = [lines[0]]
    for number, line in enumerate(rows):
        fields = line.split(";")
        kind = rng.random()
        area = rng.choice(["CN", "CH", "LC", "MT"])
        if kind < 0.01:
            fields[col[f"TP_PRESENCA_{area}"]] = rng.choice(["", "7"])
        elif kind < 0.02:
            fields[col[f"CO_PROVA_{area}"]] = rng.choice(["", "99999", "x"])
        elif kind < 0.03:
            fields[col[f"TX_RESPOSTAS_{area}"]] = fields[col[f"TX_RESPOSTAS_{area}"]][:-1]
        elif kind < 0.04:
            text = fields[col[f"TX_RESPOSTAS_{area}"]]
            fields[col[f"TX_RESPOSTAS_{area}"]] = text[:-1] + "Z" if text else text
        elif kind < 0.045:
            fields[col["TP_LINGUA"]] = "5"
        elif kind < 0.05:
            fields[col[f"TX_RESPOSTAS_{area}"]] = "." * len(fields[col[f"TX_RESPOSTAS_{area}"]])
        out.append(";".join(fields))
        if kind > 0.995:
            out.append(";".join(fields[:-3]))  # too few fields
        if kind > 0.99 and number % 2:
            out.append(line)  # a later line repeating the id
    if "NU_ANO" in col:
        fields = rows[0].split(";")
        fields[col["NU_ANO"]] = "1999"
        out.append(";".join(fields))
    path = target / microdata.name
    path.write_bytes(("\n".join(out) + "\n").encode("latin-1"))
    return path


def dump(folder: Path, rows: int, seed: int) -> None:
    """Ingest the bench year and damaged small years; write each table sorted to Parquet."""
    folder.mkdir(parents=True, exist_ok=True)
    inputs = [("bench", *ensure_files(rows, seed), 2023)]
    for year in (2023, 2019, 2024):
        source = folder / f"input_{year}"
        source.mkdir(exist_ok=True)
        files = generate_demo_files(source, year=year, n_examinees=20_000, seed=year,
                                    progress=False)
        inputs.append((f"damaged_{year}", _damaged_copy(files.microdata, source, year),
                       files.items, year))
    for name, microdata, items, year in inputs:
        db = folder / f"{name}.duckdb"
        remove_store(db)
        summary = ingest_year(db, year, microdata, items, progress=False)
        lines = [line for line in summary.lines() if " ingested in " not in line]
        (folder / f"{name}.summary.txt").write_text("\n".join(lines) + "\n")
        con = open_reader(db)
        for table in YEAR_PART_TABLES:  # every table an ingest writes (not its timings)
            con.execute(f"COPY (SELECT * FROM {table} ORDER BY ALL) TO "
                        f"'{folder / f'{name}.{table}.parquet'}' (FORMAT parquet)")
        con.close()
        remove_store(db)
        print(f"{name}: dumped", flush=True)


#: Floating-point values may differ by this much (relative): the ingest itself is not
#: reproducible to the last bit, as DuckDB hands rows over in varying order and batches.
FLOAT_TOLERANCE = 1e-12


def compare(before: Path, after: Path) -> bool:
    """Print, per dumped table, whether the two folders hold the same rows: every count, id and
    text exactly, floating-point values to FLOAT_TOLERANCE (relative)."""
    same = True
    con = duckdb.connect()
    for summary in sorted(before.glob("*.summary.txt")):
        equal = summary.read_text() == (after / summary.name).read_text()
        same &= equal
        print(f"{summary.name}: {'same' if equal else 'DIFFERENT'}")
    for path in sorted(before.glob("*.parquet")):
        old = con.execute("SELECT * FROM read_parquet($p)", {"p": str(path)}).df()
        new = con.execute("SELECT * FROM read_parquet($p)", {"p": str(after / path.name)}).df()
        problems, largest = [], 0.0
        if list(old.columns) != list(new.columns) or len(old) != len(new):
            problems.append(f"{len(new):,} rows after, columns {list(new.columns)}")
        else:
            for column in old.columns:
                a, b = old[column].to_numpy(), new[column].to_numpy()
                if a.dtype == object and any(isinstance(v, np.ndarray) for v in a[:1]):
                    a, b = _flatten_lists(a, b)  # list columns (quantiles): element by element
                    if a is None:
                        problems.append(f"{column}: lists of other lengths")
                        continue
                if a.dtype.kind == "f":
                    with np.errstate(invalid="ignore"):
                        gap = np.abs(a - b) / np.maximum(1.0, np.abs(a))
                    if not np.array_equal(np.isnan(a), np.isnan(b)):
                        problems.append(f"{column}: NaN in other rows")
                    elif np.nanmax(gap, initial=0.0) > FLOAT_TOLERANCE:
                        problems.append(f"{column}: differs by up to {np.nanmax(gap):.3g}")
                    largest = max(largest, float(np.nanmax(gap, initial=0.0)))
                elif not (old[column].isna().equals(new[column].isna())
                          and (old[column] == new[column])[old[column].notna()].all()):
                    problems.append(f"{column}: different values")
        same &= not problems
        note = f" (floats within {largest:.1e})" if largest else ""
        print(f"{path.name}: {len(old):,} rows " + ("same" + note if not problems
                                                   else "DIFFERENT: " + "; ".join(problems)))
    con.close()
    print("IDENTICAL" if same else "DIFFERENCES FOUND")
    return same


def _flatten_lists(a: np.ndarray, b: np.ndarray):
    """Two object arrays of float arrays as two flat float arrays; (None, None) when the list
    lengths differ."""
    if [len(v) for v in a] != [len(v) for v in b]:
        return None, None
    empty = np.zeros(0)
    return (np.concatenate([np.asarray(v, float) for v in a] or [empty]),
            np.concatenate([np.asarray(v, float) for v in b] or [empty]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates in the year")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument("--dump", type=Path, metavar="DIR", help="dump sorted tables, no timing")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.dump:
        dump(args.dump, args.rows, args.seed)
        return
    if args.compare:
        sys.exit(0 if compare(*args.compare) else 1)
    microdata, items = ensure_files(args.rows, args.seed)
    size_gb = microdata.stat().st_size / 1e9
    print(f"microdata: {microdata.name}, {args.rows:,} rows, {size_gb:.2f} GB")
    scan = bare_scan_seconds(microdata)
    print(f"bare DuckDB scan (every column parsed), file cached: {scan:.1f} s", flush=True)
    db = OUT / "bench.duckdb"
    ingest, peak_gb, where = ingest_seconds(microdata, items, db)
    print(f"ingest + scoring + aggregates:            {ingest:.1f} s")
    print(f"ratio ingest / scan: {ingest / scan:.2f}×  (target ≤ 3×, moonshot 2×)")
    print(f"peak memory of the ingest process: {peak_gb:.2f} GB  (target ≤ 4 GB)")
    print("where the ingest's time went:")
    print("\n".join(where))
    if not args.keep:
        db.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
