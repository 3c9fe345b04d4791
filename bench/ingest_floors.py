"""Lower bounds for the ingest: the three steps no ingest of this store can skip, timed alone.

    python -m bench.ingest_floors [--rows 3900000]

On the same cached synthetic year as ``bench/ingest.py``, times in this run:
  0. the bare DuckDB scan (the baseline of the ingest target, as in ``bench/ingest.py``);
  1. loading the CSV into ``examinees``: the ingest's own statement
     (``store.year_tables.load_examinees``) on a fresh store, committed, with no line scan
     beside it;
  2. the score arithmetic: ``analytics.scoring.score_responses`` (EAP, l_z, l_z*, CTT) on as
     many 45-item 0/1 patterns as the year has present records, already as float matrices
     (no string decoding, no item statistics);
  3. storing that many score rows (``SCORE_SCHEMA``, synthetic values) into ``scores``.
Prints wall-clock and CPU seconds per step (CPU of every thread), each step's wall time over
the scan, and what the three together need at the least on this machine's cores: their CPU
seconds divided by the cores. An ingest that keeps the store's contents cannot beat that
ratio here, whatever its layout; the item statistics, histograms, populations, line scan
and rejects come on top.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from analytics.irt import ItemBank
from analytics.scoring import score_responses
from bench.ingest import bare_scan_seconds, ensure_files
from bench.scoring import inep_like_bank, simulate
from enem.microdata import detect_layout
from enem.score_batches import SCORE_SCHEMA
from store.connection import insert_rows
from store.schema import ensure_schema
from store.year_tables import configure_bulk_session, load_examinees

YEAR = 2023
N_ITEMS = 45
#: Patterns scored (and score rows stored) per call: a bounded few hundred MB at a time.
CHUNK_ROWS = 500_000


def timed(step: Callable[[], object]) -> tuple[float, float]:
    """(wall-clock s, CPU s of the whole process, every thread) of one call of ``step``."""
    wall, cpu = time.monotonic(), time.process_time()
    step()
    return time.monotonic() - wall, time.process_time() - cpu


def load_step(con: duckdb.DuckDBPyConnection, microdata: Path) -> Callable[[], None]:
    """The ingest's CSV load into ``examinees``, in a transaction, committed."""
    layout = detect_layout(microdata, "latin-1")

    def step() -> None:
        con.execute("BEGIN")
        load_examinees(con, YEAR, microdata, layout, "latin-1", [str(YEAR), ""])
        con.execute("COMMIT")
    return step


def present_records(con: duckdb.DuckDBPyConnection) -> int:
    """Area records with TP_PRESENCA = 1 in the loaded year."""
    return con.execute(
        """SELECT sum((presence_cn = 1)::INT + (presence_ch = 1)::INT
                      + (presence_lc = 1)::INT + (presence_mt = 1)::INT)
           FROM examinees""").fetchone()[0]


def synthetic_patterns(n_rows: int, seed: int = 0) -> tuple[ItemBank, list[np.ndarray]]:
    """An INEP-like bank of N_ITEMS items and ``n_rows`` 0/1 patterns drawn from it, in chunks
    (``bench.scoring``'s bank and simulation)."""
    rng = np.random.default_rng(seed)
    bank = inep_like_bank(N_ITEMS, rng)
    return bank, [simulate(bank, min(CHUNK_ROWS, n_rows - start), rng)
                  for start in range(0, n_rows, CHUNK_ROWS)]


def score_rows(n_rows: int, seed: int = 0) -> list[pa.Table]:
    """``n_rows`` synthetic score rows in the store's schema, in chunks."""
    rng = np.random.default_rng(seed)
    tables = []
    for start in range(0, n_rows, CHUNK_ROWS):
        size = min(CHUNK_ROWS, n_rows - start)
        tables.append(pa.Table.from_pydict({
            "year": pa.array(np.full(size, YEAR, np.int32)),
            "examinee_id": pa.array((230_000_000_000 + start + np.arange(size)).astype(str)),
            "area": pa.repeat(pa.scalar("CN"), size),
            "booklet_id": pa.array(rng.integers(1000, 1010, size).astype(np.int32)),
            "item_language": pa.nulls(size, pa.int16()),
            "theta": pa.array(rng.normal(size=size)),
            "theta_se": pa.array(rng.uniform(0.2, 0.6, size)),
            "lz": pa.array(rng.normal(size=size)), "lz_star": pa.array(rng.normal(size=size)),
            "ctt": pa.array(rng.integers(0, N_ITEMS + 1, size).astype(np.int16)),
            "n_scored": pa.array(np.full(size, N_ITEMS, np.int16)),
            "nota": pa.array(np.round(rng.normal(500, 100, size), 1)),
            "blank": pa.array(np.zeros(size, bool)),
            "state": pa.array(np.array(["SP", "MG", "BA", "RJ"])[rng.integers(0, 4, size)]),
            "school_type": pa.array(rng.integers(1, 4, size).astype(np.int16)),
        }, schema=SCORE_SCHEMA))
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates in the year")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    microdata, _ = ensure_files(args.rows, args.seed)
    cores = os.cpu_count() or 1
    scan = bare_scan_seconds(microdata)
    print(f"bare DuckDB scan (every column parsed), file cached: {scan:.2f} s")
    steps: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory(dir=microdata.parent) as folder:
        con = duckdb.connect(str(Path(folder) / "floors.duckdb"))
        ensure_schema(con)
        configure_bulk_session(con)
        steps.append(("load the CSV into examinees", *timed(load_step(con, microdata))))
        records = present_records(con)
        bank, patterns = synthetic_patterns(records)
        steps.append((f"score {records:,} patterns (EAP, l_z, l_z*)",
                      *timed(lambda: [score_responses(chunk, bank) for chunk in patterns])))
        patterns.clear()
        tables = score_rows(records)

        def store() -> None:
            con.execute("BEGIN")
            for table in tables:
                insert_rows(con, "scores", table)
            con.execute("COMMIT")
            con.execute("CHECKPOINT")
        steps.append((f"store {records:,} score rows", *timed(store)))
        con.close()
    print(f"{'step':45s} {'wall s':>7s} {'CPU s':>7s} {'wall/scan':>9s}")
    for name, wall, cpu in steps:
        print(f"{name:45s} {wall:7.2f} {cpu:7.2f} {wall / scan:8.2f}×")
    cpu = sum(cpu for _, _, cpu in steps)
    print(f"the three steps: {cpu:.1f} CPU s; on {cores} cores at least {cpu / cores:.1f} s, "
          f"{cpu / cores / scan:.2f}× the scan (the ingest target is ≤ 3×)")


if __name__ == "__main__":
    main()
