"""Write-cost benchmark: what a write costs on a one-year store and on a ten-year store.

    .venv/bin/python -m bench.store_writes [--rows 3900000] [--years 10] [--repeat 3] [--keep]
    .venv/bin/python -m bench.store_writes --source STORE.duckdb   # any one-year store

Takes the full-size one-year store of ``bench.pages`` (``bench/out/pages_<rows>.duckdb``,
built once by ``bench.pages.build_database`` when missing; never written here: it is copied)
and makes, under a scratch folder (``--scratch``, default /tmp/storewrites/stores):
  one-year: a copy of it;
  ten-year: a copy whose every year table (``store.schema.YEAR_TABLES``, with the year's
            rejects, question texts, item attributes and an ``ingests`` row, which is what the
            dashboard lists years by) holds the one generated year again under ``--years`` − 1
            more year numbers: a bench fixture written directly with DuckDB, then checkpointed.
Then, on each store, times the writes a user makes, through the functions the CLI calls:
  ingest items       ``enem-llm ingest-items`` of the real 2019–2022 item files (the import
                     needs them; one sample per year);
  publish run        ``enem-llm run --backend random --areas MT`` (45 items × 30 shuffles:
                     the whole run, scoring and publishing, the random backend's answers
                     taking a fraction of a second);
  import results     ``enem-llm import-results`` of the seed paper's results file (the first
                     adds its runs, the repeats replace them);
  remove run         ``enem-llm remove-run`` of a run whose rows the store holds unpublished
                     (one of the runs published above, marked failed by an untimed write
                     first: the CLI never removes a published run).
Each is the median of ``--repeat`` (default 3) samples, with the peak extra disk while it ran:
the largest (files under the store's folder) − (their size before), polled every 50 ms from a
thread, and the largest drop of the file system's free space (``os.statvfs``) as a check.
Prints a table of operation × {one-year, ten-year}: seconds, peak extra disk and the ratio
ten/one, and the two stores' sizes; writes bench/out/store_writes.json. Goal of issue 28 (a
store whose write cost follows what changes): ten-year within 1.5× the one-year figures, and
extra disk during a write no more than the largest file written. ``--keep`` keeps the stores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import duckdb

from inference.plan import RunSpec
from store.connection import connected
from store.schema import YEAR_TABLES, ensure_schema
from workflows.harness import import_results_file
from workflows.ingest import ingest_items
from workflows.runs import service as runs_service
from workflows.runs.execution import execute_run

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
SCRATCH = Path("/tmp/storewrites/stores")
REAL = Path("/work/shared/data/real")
RESULTS_FILE = REAL / "paper-results" / "enem-experiments-results-processed-with-irt-lz.parquet"
#: The exams of the paper's results: stored items-only, so never one of the copied years.
RESULTS_YEARS: tuple[int, ...] = (2019, 2020, 2021, 2022)
#: Tables outside YEAR_TABLES whose rows also belong to one year (copied with the year).
OTHER_YEAR_TABLES: tuple[str, ...] = ("rejects", "question_texts", "item_attributes")
POLL_SECONDS = 0.05
GOAL_RATIO = 1.5


# ---------------------------------------------------------------------------- the stores

def one_year_source(rows: int, seed: int) -> Path:
    """The cached full-size one-year store of ``bench.pages`` (built when missing)."""
    cached = OUT / f"pages_{rows}.duckdb"
    if cached.exists():
        return cached
    from bench.pages import build_database  # streamlit and the page fixtures: only when needed
    return build_database(rows, seed)


def copy_store(source: Path, folder: Path) -> Path:
    """A copy of ``source`` as ``folder/store/enem.duckdb`` (the folder emptied first), brought
    to this code's schema (a cached store may predate tables added since), checkpointed."""
    shutil.rmtree(folder, ignore_errors=True)
    target = folder / "store" / "enem.duckdb"
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    with duckdb.connect(str(target)) as con:
        ensure_schema(con)
        con.execute("CHECKPOINT")
    return target


def candidate_years(db: Path) -> list[int]:
    """The years of ``db`` that hold candidates, oldest first."""
    with duckdb.connect(str(db), read_only=True) as con:
        return [int(row[0]) for row in con.execute(
            "SELECT DISTINCT year FROM examinees ORDER BY year").fetchall()]


def microdata_year(db: Path) -> int:
    """The one year of ``db`` that holds candidates."""
    years = candidate_years(db)
    if len(years) != 1:
        raise ValueError(f"{db} holds candidates of {years or 'no year'}; expected one year")
    return int(years[0])


def extra_year_numbers(source_year: int, count: int) -> list[int]:
    """``count`` year numbers before ``source_year``, skipping the results' items-only years."""
    years: list[int] = []
    year = source_year - 1
    while len(years) < count:
        if year not in RESULTS_YEARS:
            years.append(year)
        year -= 1
    return sorted(years)


def add_years(db: Path, source_year: int, years: list[int]) -> None:
    """Copy every row of ``source_year`` in the year tables under each of ``years``, with an
    ``ingests`` row per year, in one transaction; then checkpoint (a fixture, not a user
    write: DuckDB on the file directly)."""
    listed = ", ".join(str(int(year)) for year in years)
    with duckdb.connect(str(db)) as con:
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        con.execute("BEGIN TRANSACTION")
        for table in YEAR_TABLES + OTHER_YEAR_TABLES:
            con.execute(f"""INSERT INTO {table}
                            SELECT t.* REPLACE (copy.year AS year)
                            FROM {table} t, (SELECT unnest([{listed}]) AS year) copy
                            WHERE t.year = {int(source_year)}""")
        con.execute(f"""INSERT INTO ingests
                        SELECT i.* REPLACE (
                            (SELECT max(ingest_id) FROM ingests) + copy.n AS ingest_id,
                            copy.year AS year)
                        FROM (SELECT * FROM ingests WHERE year = {int(source_year)}
                              ORDER BY ingest_id DESC LIMIT 1) i,
                             (SELECT unnest([{listed}]) AS year,
                                     unnest(range(1, {len(years) + 1})) AS n) copy""")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")


def rows_per_year(db: Path, tables: tuple[str, ...] = YEAR_TABLES) -> dict[str, dict[int, int]]:
    """Row counts of each table by year."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {table: {int(year): int(n) for year, n in con.execute(
            f"SELECT year, count(*) FROM {table} GROUP BY year").fetchall()}
            for table in tables}


def build_stores(source: Path, scratch: Path, n_years: int) -> dict[str, Path]:
    """The one-year and the ``n_years``-year copies of ``source`` under ``scratch``."""
    stores = {"one-year": copy_store(source, scratch / "one-year")}
    ten = copy_store(source, scratch / f"{n_years}-year")
    year = microdata_year(ten)
    started = time.perf_counter()
    print(f"  building the {n_years}-year store …", flush=True)
    add_years(ten, year, extra_year_numbers(year, n_years - 1))
    print(f"  {n_years}-year store built in {time.perf_counter() - started:.0f} s", flush=True)
    stores[f"{n_years}-year"] = ten
    return stores


# ---------------------------------------------------------------------- measuring a write

def folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (files that vanish while counted count 0)."""
    total = 0
    for path, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.stat(os.path.join(path, name)).st_size
            except FileNotFoundError:
                pass
    return total


def free_bytes(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize


@dataclass
class DiskPeak:
    """The peak extra bytes under a folder, and the peak drop of free space, while watched."""

    folder_extra: int = 0
    free_drop: int = 0


@contextmanager
def watching_disk(folder: Path) -> Iterator[DiskPeak]:
    """Poll ``folder`` every POLL_SECONDS from a thread while the block runs."""
    peak = DiskPeak()
    size_before, free_before = folder_bytes(folder), free_bytes(folder)
    done = threading.Event()

    def poll() -> None:
        while True:
            peak.folder_extra = max(peak.folder_extra, folder_bytes(folder) - size_before)
            peak.free_drop = max(peak.free_drop, free_before - free_bytes(folder))
            if done.wait(POLL_SECONDS):
                return

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


@dataclass
class Measured:
    """Samples of one operation on one store: seconds and peak extra bytes of each."""

    seconds: list[float] = field(default_factory=list)
    folder_extra: list[int] = field(default_factory=list)
    free_drop: list[int] = field(default_factory=list)

    def add(self, seconds: float, peak: DiskPeak) -> None:
        self.seconds.append(seconds)
        self.folder_extra.append(peak.folder_extra)
        self.free_drop.append(peak.free_drop)

    def summary(self) -> dict:
        return {"seconds": round(statistics.median(self.seconds), 3),
                "peak_extra_bytes": int(statistics.median(self.folder_extra)),
                "peak_free_drop_bytes": int(statistics.median(self.free_drop)),
                "samples": len(self.seconds),
                **{f"{name}_samples": values for name, values in asdict(self).items()}}


def measure(db: Path, action: Callable[[], object], into: Measured) -> object:
    """Run ``action`` once, adding its wall time and peak extra disk to ``into``."""
    with watching_disk(db.parent) as peak:
        started = time.perf_counter()
        result = action()
        elapsed = time.perf_counter() - started
    into.add(elapsed, peak)
    return result


# ------------------------------------------------------------------ the public operations

def runs_folder(db: Path) -> Path:
    """Run folders beside the store's folder, so they are not counted as the store's disk."""
    return db.parent.parent / "runs"


def run_spec(year: int, seed: int) -> RunSpec:
    """A 45-item run of the random baseline (MT, Portuguese, 0 shots, 30 shuffles)."""
    return RunSpec(model="random-baseline", backend="random", year=year, areas=("MT",),
                   seed=seed)


def publish_run(db: Path, year: int, seed: int) -> str:
    """``enem-llm run --backend random --year YEAR --areas MT --seed SEED``; the run id."""
    outcome = execute_run(run_spec(year, seed), db, runs_folder(db))
    if outcome.status != "finished":
        raise RuntimeError(f"run {outcome.run_id} ended {outcome.status}")
    return outcome.run_id


def store_items(db: Path, year: int) -> None:
    """``enem-llm ingest-items --year YEAR --items ITENS_PROVA_YEAR.csv`` (the real file)."""
    ingest_items(db, year, REAL / "items" / f"ITENS_PROVA_{year}.csv")


def import_results(db: Path, results: Path = RESULTS_FILE) -> list[str]:
    """``enem-llm import-results RESULTS``; the imported run ids."""
    with connected(db) as con:
        return import_results_file(con, results).run_ids


def unpublish(db: Path, run_id: str) -> None:
    """Mark a published run failed (an untimed write through the store's write session), so
    that ``remove-run`` may remove it: its rows become unpublished rows."""
    with connected(db) as con:
        con.execute("UPDATE model_runs SET status = 'failed' WHERE run_id = ?", [run_id])


def remove_run(db: Path, run_id: str) -> str:
    """``enem-llm remove-run RUN_ID``; the sentence it prints."""
    return runs_service.remove_run(run_id, db, runs_folder(db))


def stored_run_ids(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {row[0] for row in con.execute("SELECT run_id FROM model_runs").fetchall()}


def measure_store(db: Path, repeat: int) -> dict[str, dict]:
    """Every operation on ``db``, ``repeat`` samples each (ingest items: one per year of the
    results file, which the import needs); runs are of the newest year."""
    year = candidate_years(db)[-1]
    items, publish, imports, removal = Measured(), Measured(), Measured(), Measured()
    for exam in RESULTS_YEARS:
        measure(db, partial(store_items, db, exam), items)
    published = [str(measure(db, partial(publish_run, db, year, seed), publish))
                 for seed in range(repeat)]
    for _ in range(repeat):
        measure(db, partial(import_results, db), imports)
    for run_id in published:
        unpublish(db, run_id)
        measure(db, partial(remove_run, db, run_id), removal)
    return {"ingest items": items.summary(), "publish run": publish.summary(),
            "import results": imports.summary(), "remove run": removal.summary()}


# ------------------------------------------------------------------------------ reporting

def gigabytes(size: int) -> str:
    return f"{size / 1e9:6.2f} GB" if size >= 1e9 else f"{size / 1e6:6.0f} MB"


def table_lines(results: dict[str, dict], sizes: dict[str, int]) -> list[str]:
    """Operation × store: seconds, peak extra disk; the ratio of the last store to the first."""
    names = list(results)
    first, last = names[0], names[-1]
    lines = [(f"{'operation':16s} {first + ' s':>11s} {last + ' s':>11s} {'ratio':>6s}  "
              f"{first + ' disk':>15s} {last + ' disk':>15s} {'ratio':>6s}")]
    for operation, one in results[first].items():
        ten = results[last][operation]
        seconds_ratio = ten["seconds"] / one["seconds"] if one["seconds"] else float("nan")
        disk_ratio = (ten["peak_extra_bytes"] / one["peak_extra_bytes"]
                      if one["peak_extra_bytes"] else float("nan"))
        note = f"  ({one['samples']} samples)"
        lines.append(f"{operation:16s} {one['seconds']:11.2f} {ten['seconds']:11.2f} "
                     f"{seconds_ratio:6.2f}  {gigabytes(one['peak_extra_bytes']):>15s} "
                     f"{gigabytes(ten['peak_extra_bytes']):>15s} {disk_ratio:6.2f}{note}")
    lines.append("store size: " + ", ".join(f"{name} {gigabytes(size).strip()}"
                                           for name, size in sizes.items()))
    lines.append(f"goal (issue 28): {last} time within {GOAL_RATIO}× {first}; extra disk ≤ the "
                 "largest file a write writes")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates of the year")
    parser.add_argument("--years", type=int, default=10, help="years of the large store")
    parser.add_argument("--repeat", type=int, default=3, help="samples per operation (median)")
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--source", type=Path,
                        help="a one-year store to copy instead of bench.pages' (e.g. the demo)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="where the stores go")
    parser.add_argument("--output", type=Path, default=OUT / "store_writes.json")
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    args = parser.parse_args(argv)
    source = args.source or one_year_source(args.rows, args.seed)
    print(f"one-year store: {source} ({gigabytes(source.stat().st_size).strip()}); free disk "
          f"{gigabytes(free_bytes(source.parent)).strip()}", flush=True)
    try:
        stores = build_stores(source, args.scratch, args.years)
        sizes = {name: db.stat().st_size for name, db in stores.items()}
        results = {}
        for name, db in stores.items():
            print(f"measuring {name} ({gigabytes(sizes[name]).strip()}) …", flush=True)
            results[name] = measure_store(db, args.repeat)
        lines = table_lines(results, sizes)
        print("\n".join(lines))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(
            {"rows": args.rows, "years": args.years, "repeat": args.repeat,
             "store_bytes": sizes, "results": results, "table": lines}, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(args.scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
