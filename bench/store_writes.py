"""Write-cost benchmark: what a write costs on a one-year and an N-year store, in each layout.

    .venv/bin/python -m bench.store_writes [--rows 3900000] [--years 10] [--repeat 3] [--keep]
    .venv/bin/python -m bench.store_writes --source STORE.duckdb   # any one-year store
    .venv/bin/python -m bench.store_writes --layouts per-year      # one layout only
    .venv/bin/python -m bench.store_writes --results FILE.parquet  # import another results file

The source is ``--source`` or the full-size one-year store of ``bench.pages``
(``bench/out/pages_<rows>.duckdb``, built once by ``bench.pages.build_database`` when missing),
of either layout; it is never written (``store.layout.copy_store`` hard-links its year files,
and no write changes a year file). One run measures each layout of ``--layouts`` (default
both; the single file is the baseline). For a layout, two stores are made under
``--scratch/<layout>/`` (default /tmp/storewrites/stores), each alone in its folder
``<one-year|N-year>/store/enem.duckdb``, so that the disk watched (the store's folder) holds its
year files too, and run folders go beside it (``…/runs``), not counted:

  per-year  one-year: ``copy_store`` of the source (migrated with ``store.migration`` when the
                      source is a single file), then an empty write session (``writing``), which
                      brings the main file's schema up to date;
            N-year:   ``copy_store`` of the one-year store, then, for each of ``--years`` − 1
                      more year numbers Y, one ``writing(db, year=Y, replace_year=True)``
                      session: Y's new file gets the source year's rows of every year table
                      (``store.schema.YEAR_PART_TABLES``) read from that year's catalog, and the
                      main file the source year's question texts and item attributes under Y
                      and a copy of its newest ``ingests`` row (the dashboard lists years by
                      those);
  single    one-year: ``store.migration.write_single_file`` of the source;
            N-year:   a copy of that file to which the same rows are added by DuckDB on the
                      file directly, in one transaction, then checkpointed (a fixture, not a
                      user write).

The extra year numbers are the ones before the source's year, skipping 2019–2022 (the results
file's items-only exams, which the measured writes add). Every read goes through
``store.connection.open_reader``; a store's size is ``store.migration.store_bytes`` (its main
file and year files). Then, on each store, it times the writes a user makes, through the
functions the CLI calls:
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
the largest (bytes of the files under the store's folder) − (their bytes before), polled every
50 ms from a thread, and the largest drop of the file system's free space (``os.statvfs``) as a
check; and the largest file the write wrote (of the files under the store's folder that are
new, renamed over or modified after it — the main file, a new year file, the single file —
the larger of its sizes before and after). The writers' lock file counts in neither.

Prints, per layout, a table of operation × {one-year, N-year}: seconds, peak extra disk, the
ratios N/one and the largest file written; the two stores' sizes; and whether the goal of issue
28 (a store whose write cost follows what changes) holds: N-year seconds within 1.5× one-year
for publish run, import results and remove run, and each write's peak extra disk no more than
the largest file it writes (up to 10% more: DuckDB's log beside it) (in the per-year layout
the main file, or the year's new file for ingest items when that is the larger: the two are
written together; in the single layout the whole file). Writes ``--output`` (default
bench/out/store_writes.json): ``{"layouts": {layout: {stores, store_bytes, results, goal,
table}}}``. The stores are removed at the end unless ``--keep``.
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
from store import layout
from store.connection import (
    connected,
    forget_recent_readers,
    is_per_year_store,
    open_reader,
    writing,
)
from store.migration import migrate_store, store_bytes, write_single_file
from store.schema import YEAR_PART_TABLES
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
#: Tables of the main file whose rows also belong to one year (copied with the year).
MAIN_YEAR_TABLES: tuple[str, ...] = ("question_texts", "item_attributes")
#: Every table whose rows a copied year gets.
COPIED_TABLES: tuple[str, ...] = YEAR_PART_TABLES + MAIN_YEAR_TABLES
#: The layouts measured: a store of per-year files, and the single file (the baseline).
LAYOUTS: tuple[str, ...] = ("per-year", "single")
#: The operations whose N-year time the goal bounds (ingest items writes a year of its own).
TIMED_GOAL: tuple[str, ...] = ("publish run", "import results", "remove run")
POLL_SECONDS = 0.05
GOAL_RATIO = 1.5
#: How far above the largest file a write writes its peak extra disk may go and still count
#: as no more than it: DuckDB's write-ahead log beside the file while it is written.
DISK_SLACK = 1.1


# ---------------------------------------------------------------------------- the stores

def one_year_source(rows: int, seed: int) -> Path:
    """The cached full-size one-year store of ``bench.pages`` (built when missing)."""
    cached = OUT / f"pages_{rows}.duckdb"
    if cached.exists():
        return cached
    from bench.pages import build_database  # streamlit and the page fixtures: only when needed
    return build_database(rows, seed)


def store_in(folder: Path) -> Path:
    """``folder/store/enem.duckdb``, the folder emptied first and the store's folder made."""
    shutil.rmtree(folder, ignore_errors=True)
    target = folder / "store" / "enem.duckdb"
    target.parent.mkdir(parents=True)
    return target


def layout_of(db: Path) -> str:
    return "per-year" if is_per_year_store(db) else "single"


def one_year_store(source: Path, folder: Path, store_layout: str) -> Path:
    """The one-year store of ``store_layout`` made from ``source`` (either layout), as
    ``folder/store/enem.duckdb``, its schema this code's."""
    target = store_in(folder)
    if store_layout == "single":
        return write_single_file(source, target)
    layout.copy_store(source, target)
    if not is_per_year_store(target):
        migrate_store(target)
    with writing(target):
        pass  # brings the main file's schema up to date (a cached store may predate tables)
    return target


def copy_into(source: Path, folder: Path) -> Path:
    """A copy of the store ``source`` (either layout) as ``folder/store/enem.duckdb``."""
    target = store_in(folder)
    layout.copy_store(source, target)
    return target


def candidate_years(db: Path) -> list[int]:
    """The years of ``db`` that hold candidates, oldest first."""
    con = open_reader(db)
    try:
        return [int(row[0]) for row in con.execute(
            "SELECT DISTINCT year FROM examinees ORDER BY year").fetchall()]
    finally:
        con.close()


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


def _tables_in(con: duckdb.DuckDBPyConnection, catalog: str) -> set[str]:
    return {row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [catalog]).fetchall()}


def _copy_ingest(con: duckdb.DuckDBPyConnection, table: str, source_year: int, year: int
                 ) -> None:
    """Insert a copy of ``source_year``'s newest ``ingests`` row (of ``table``) as ``year``'s,
    under the next ingest id."""
    con.execute(f"""INSERT INTO {table}
                    SELECT * REPLACE ((SELECT max(ingest_id) FROM {table}) + 1 AS ingest_id,
                                      {int(year)} AS year)
                    FROM {table} WHERE year = {int(source_year)}
                    ORDER BY ingest_id DESC LIMIT 1""")


def add_years_per_year(db: Path, source_year: int, years: list[int]) -> None:
    """Give the per-year store ``db`` a copy of ``source_year`` under each of ``years``: one
    write session per year, which fills the year's new file from the source year's file and
    adds the year's rows of the main file (question texts, item attributes, an ingest)."""
    source_catalog = layout.year_catalog(source_year)
    core = layout.CORE_CATALOG
    for number, year in enumerate(years, 1):
        started = time.perf_counter()
        with writing(db, year=year, replace_year=True) as con:
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            target = layout.year_catalog(year)
            present = _tables_in(con, source_catalog)
            for table in (name for name in YEAR_PART_TABLES if name in present):
                con.execute(f"""INSERT INTO {target}.main.{table} BY NAME
                                SELECT * REPLACE ({int(year)} AS year)
                                FROM {source_catalog}.main.{table}""")
            for table in (name for name in MAIN_YEAR_TABLES if name in _tables_in(con, core)):
                con.execute(f"""INSERT INTO {core}.main.{table} BY NAME
                                SELECT * REPLACE ({int(year)} AS year)
                                FROM {core}.main.{table} WHERE year = {int(source_year)}""")
            _copy_ingest(con, f"{core}.main.ingests", source_year, year)
        print(f"    year {year} ({number}/{len(years)}) in "
              f"{time.perf_counter() - started:.1f} s", flush=True)


def add_years_single(db: Path, source_year: int, years: list[int]) -> None:
    """Copy every row of ``source_year`` in the year tables of the single file ``db`` under
    each of ``years``, with an ``ingests`` row per year, in one transaction; then checkpoint
    (a fixture, not a user write: DuckDB on the file directly)."""
    listed = ", ".join(str(int(year)) for year in years)
    # DuckDB refuses to open for writing a file this process still has attached: the
    # readers it keeps (store.connection.open_reader) let go of it first.
    forget_recent_readers()
    with duckdb.connect(str(db)) as con:
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        present = {row[0] for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()}
        con.execute("BEGIN TRANSACTION")
        for table in (name for name in COPIED_TABLES if name in present):
            con.execute(f"""INSERT INTO {table}
                            SELECT t.* REPLACE (copy.year AS year)
                            FROM {table} t, (SELECT unnest([{listed}]) AS year) copy
                            WHERE t.year = {int(source_year)}""")
        for year in years:
            _copy_ingest(con, "ingests", source_year, year)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")


def rows_per_year(db: Path, tables: tuple[str, ...] = COPIED_TABLES
                  ) -> dict[str, dict[int, int]]:
    """Row counts of each table by year ({} for a table the store lacks)."""
    counts: dict[str, dict[int, int]] = {}
    con = open_reader(db)
    try:
        for table in tables:
            try:
                rows = con.execute(f"SELECT year, count(*) FROM {table} GROUP BY year").fetchall()
            except duckdb.CatalogException:
                rows = []
            counts[table] = {int(year): int(n) for year, n in rows}
    finally:
        con.close()
    return counts


def build_stores(source: Path, scratch: Path, n_years: int, store_layout: str
                 ) -> dict[str, Path]:
    """The one-year and the ``n_years``-year stores of ``store_layout`` made from ``source``,
    under ``scratch/<store_layout>/``."""
    folder = scratch / store_layout
    one = one_year_store(source, folder / "one-year", store_layout)
    stores = {"one-year": one}
    many = copy_into(one, folder / f"{n_years}-year")
    year = microdata_year(many)
    started = time.perf_counter()
    print(f"  building the {n_years}-year {store_layout} store …", flush=True)
    add = add_years_per_year if store_layout == "per-year" else add_years_single
    add(many, year, extra_year_numbers(year, n_years - 1))
    print(f"  {n_years}-year {store_layout} store built in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    stores[f"{n_years}-year"] = many
    return stores


# ---------------------------------------------------------------------- measuring a write

def _is_lock(name: str) -> bool:
    """The writers' lock, where a writer writes its name: no part of the store's data."""
    return name.endswith(".writer-lock")


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder``, the writers' lock aside (files that vanish while
    counted count 0)."""
    total = 0
    for path, _, names in os.walk(folder):
        for name in names:
            if _is_lock(name):
                continue
            try:
                total += os.stat(os.path.join(path, name)).st_size
            except FileNotFoundError:
                pass
    return total


def free_bytes(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize


def file_states(folder: Path) -> dict[str, tuple[int, int, int]]:
    """{path under ``folder``: (inode, modification time in ns, size)} of its files, the
    writers' lock aside (a writer writes its name there; it is no part of the store)."""
    states = {}
    for path, _, names in os.walk(folder):
        for name in names:
            if _is_lock(name):
                continue
            full = os.path.join(path, name)
            try:
                stat = os.stat(full)
            except FileNotFoundError:
                continue
            states[os.path.relpath(full, folder)] = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    return states


def written_files(before: dict[str, tuple[int, int, int]],
                  after: dict[str, tuple[int, int, int]]) -> dict[str, int]:
    """{path: bytes} of the files of ``after`` that are new, or another file (renamed over
    the path), or modified since ``before``: the larger of the file's sizes before and after
    (a write of a file starts from a copy of it, which may shrink when checkpointed)."""
    return {path: max(state[2], before.get(path, (0, 0, 0))[2])
            for path, state in after.items()
            if before.get(path, (None, None))[:2] != state[:2]}


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
    """Samples of one operation on one store: seconds, peak extra bytes and the largest file
    written, of each; and the files each wrote."""

    seconds: list[float] = field(default_factory=list)
    folder_extra: list[int] = field(default_factory=list)
    free_drop: list[int] = field(default_factory=list)
    largest_written: list[int] = field(default_factory=list)
    written: list[dict[str, int]] = field(default_factory=list)

    def add(self, seconds: float, peak: DiskPeak, written: dict[str, int]) -> None:
        self.seconds.append(seconds)
        self.folder_extra.append(peak.folder_extra)
        self.free_drop.append(peak.free_drop)
        self.largest_written.append(max(written.values(), default=0))
        self.written.append(written)

    def summary(self) -> dict:
        return {"seconds": round(statistics.median(self.seconds), 3),
                "peak_extra_bytes": int(statistics.median(self.folder_extra)),
                "peak_free_drop_bytes": int(statistics.median(self.free_drop)),
                "largest_written_bytes": int(statistics.median(self.largest_written)),
                "samples": len(self.seconds),
                **{f"{name}_samples": values for name, values in asdict(self).items()}}


def measure(db: Path, action: Callable[[], object], into: Measured) -> object:
    """Run ``action`` once, adding its wall time, peak extra disk and the files it wrote (under
    the store's folder) to ``into``."""
    before = file_states(db.parent)
    with watching_disk(db.parent) as peak:
        started = time.perf_counter()
        result = action()
        elapsed = time.perf_counter() - started
    into.add(elapsed, peak, written_files(before, file_states(db.parent)))
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


def results_years(results: Path = RESULTS_FILE) -> tuple[int, ...]:
    """The exam years of a results file (``EXAM_YEAR``): the years whose items its import
    needs (the paper's file: :data:`RESULTS_YEARS`)."""
    con = duckdb.connect()
    try:
        return tuple(int(year) for (year,) in con.execute(
            "SELECT DISTINCT EXAM_YEAR FROM read_parquet(?) ORDER BY 1", [str(results)]
        ).fetchall())
    finally:
        con.close()


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
    con = open_reader(db)
    try:
        return {row[0] for row in con.execute("SELECT run_id FROM model_runs").fetchall()}
    finally:
        con.close()


def measure_store(db: Path, repeat: int, results: Path = RESULTS_FILE) -> dict[str, dict]:
    """Every operation on ``db``, ``repeat`` samples each (ingest items: one per year of the
    results file, which the import needs); runs are of the newest year."""
    year = candidate_years(db)[-1]
    items, publish, imports, removal = Measured(), Measured(), Measured(), Measured()
    for exam in results_years(results):
        measure(db, partial(store_items, db, exam), items)
    published = [str(measure(db, partial(publish_run, db, year, seed), publish))
                 for seed in range(repeat)]
    for _ in range(repeat):
        measure(db, partial(import_results, db, results), imports)
    for run_id in published:
        unpublish(db, run_id)
        measure(db, partial(remove_run, db, run_id), removal)
    return {"ingest items": items.summary(), "publish run": publish.summary(),
            "import results": imports.summary(), "remove run": removal.summary()}


# ------------------------------------------------------------------------------ reporting

def gigabytes(size: int) -> str:
    if size >= 1e9:
        return f"{size / 1e9:6.2f} GB"
    return f"{size / 1e6:6.0f} MB" if size >= 1e7 else f"{size / 1e6:6.1f} MB"


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def goal(results: dict[str, dict]) -> dict:
    """Whether the goal of issue 28 holds on ``results`` (store → operation → summary): the
    last store's seconds within GOAL_RATIO× the first's for TIMED_GOAL, and on every store
    each operation's peak extra disk no more than the largest file it wrote (DISK_SLACK× that,
    for the log written beside it)."""
    names = list(results)
    first, last = results[names[0]], results[names[-1]]
    seconds = {operation: round(_ratio(last[operation]["seconds"],
                                       first[operation]["seconds"]), 3)
               for operation in TIMED_GOAL}
    disk = {f"{store} {operation}": round(_ratio(summary["peak_extra_bytes"],
                                                 summary["largest_written_bytes"]), 3)
            for store, operations in results.items() for operation, summary in operations.items()}
    missed = ([f"{name} {ratio:.2f}× in time" for name, ratio in seconds.items()
               if not ratio <= GOAL_RATIO]
              + [f"{name} {ratio:.2f}× the largest file written in extra disk"
                 for name, ratio in disk.items() if not ratio <= DISK_SLACK])
    return {"holds": not missed, "seconds_ratio": seconds, "disk_over_largest_written": disk,
            "missed": missed}


def table_lines(store_layout: str, results: dict[str, dict], sizes: dict[str, int]
                ) -> list[str]:
    """Operation × store: seconds, peak extra disk, the ratios of the last store to the first,
    and the largest file each wrote; the stores' sizes; whether the goal holds."""
    names = list(results)
    first, last = names[0], names[-1]
    lines = [f"{store_layout} layout",
             (f"{'operation':16s} {first + ' s':>11s} {last + ' s':>11s} {'ratio':>6s}  "
              f"{first + ' disk':>15s} {last + ' disk':>15s} {'ratio':>6s}  "
              f"{'largest file written (' + first + ' / ' + last + ')':>40s}")]
    for operation, one in results[first].items():
        many = results[last][operation]
        written = (f"{gigabytes(one['largest_written_bytes']).strip()} / "
                   f"{gigabytes(many['largest_written_bytes']).strip()}")
        lines.append(
            f"{operation:16s} {one['seconds']:11.2f} {many['seconds']:11.2f} "
            f"{_ratio(many['seconds'], one['seconds']):6.2f}  "
            f"{gigabytes(one['peak_extra_bytes']):>15s} "
            f"{gigabytes(many['peak_extra_bytes']):>15s} "
            f"{_ratio(many['peak_extra_bytes'], one['peak_extra_bytes']):6.2f}  "
            f"{written:>40s}  ({one['samples']} samples)")
    lines.append("store size: " + ", ".join(f"{name} {gigabytes(size).strip()}"
                                           for name, size in sizes.items()))
    lines.append(f"goal (issue 28): {last} time within {GOAL_RATIO}× {first} for "
                 f"{', '.join(TIMED_GOAL)}; a write's peak extra disk ≤ the largest file it "
                 f"writes (×{DISK_SLACK} for the log beside it)")
    verdict = goal(results)
    lines.append(f"{store_layout} layout: the goal "
                 + ("holds" if verdict["holds"]
                    else "does not hold: " + "; ".join(verdict["missed"])))
    return lines


def measure_layout(source: Path, scratch: Path, n_years: int, repeat: int, store_layout: str,
                   results_file: Path = RESULTS_FILE) -> dict:
    """Build the two stores of ``store_layout`` and measure each; the layout's record."""
    print(f"{store_layout} layout:", flush=True)
    stores = build_stores(source, scratch, n_years, store_layout)
    sizes = {name: store_bytes(db) for name, db in stores.items()}
    results = {}
    for name, db in stores.items():
        print(f"  measuring {name} ({gigabytes(sizes[name]).strip()}) …", flush=True)
        results[name] = measure_store(db, repeat, results_file)
    return {"stores": {name: str(db) for name, db in stores.items()}, "store_bytes": sizes,
            "results": results, "goal": goal(results),
            "table": table_lines(store_layout, results, sizes)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates of the year")
    parser.add_argument("--years", type=int, default=10, help="years of the large store")
    parser.add_argument("--repeat", type=int, default=3, help="samples per operation (median)")
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--source", type=Path,
                        help="a one-year store (either layout) instead of bench.pages' (e.g. "
                             "the demo)")
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS),
                        help="the layouts to measure (default both; single is the baseline)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="where the stores go")
    parser.add_argument("--output", type=Path, default=OUT / "store_writes.json")
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    parser.add_argument("--results", type=Path, default=RESULTS_FILE,
                        help="the results file imported (default the paper's; its exam years "
                             "are stored items-only first, and must be among "
                             f"{', '.join(map(str, RESULTS_YEARS))})")
    args = parser.parse_args(argv)
    if args.years < 2:
        parser.error("--years must be at least 2")
    layouts = list(dict.fromkeys(args.layouts))
    source = args.source or one_year_source(args.rows, args.seed)
    print(f"one-year source: {source} ({layout_of(source)}, "
          f"{gigabytes(store_bytes(source)).strip()}); free disk "
          f"{gigabytes(free_bytes(source.parent)).strip()}", flush=True)
    try:
        records = {}
        for store_layout in layouts:
            records[store_layout] = measure_layout(source, args.scratch, args.years,
                                                   args.repeat, store_layout, args.results)
            if not args.keep:  # one layout's stores at a time on the disk
                shutil.rmtree(args.scratch / store_layout, ignore_errors=True)
        print("\n\n".join("\n".join(record["table"]) for record in records.values()))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(
            {"source": str(source), "rows": None if args.source else args.rows,
             "years": args.years, "repeat": args.repeat, "layouts": records}, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(args.scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
