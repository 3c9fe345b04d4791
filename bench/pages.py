"""Page-render benchmark: every dashboard page on a full-size year, cold and warm.

    .venv/bin/python -m bench.pages [--rows 3900000] [--repeat 3] [--db STORE]

Builds once (cached under bench/out/): a synthetic year in INEP's format with ``--rows``
candidates, ingested like real data, plus synthetic TEST model runs (``testbed/fake_runs.py``:
six fake models × 4 areas × pt/en × 0/1/4 shots × 30 shuffles — clearly labelled test data).
Then runs each page with Streamlit's AppTest through the app's frame (``app.py``: navigation,
the sidebar drawn once, then the page), i.e. the whole server-side script of one request:
  cold: every st.cache_data and st.cache_resource cleared first (DuckDB still has the file in
  the OS page cache);
  warm: the same page run again with its cached queries.
Targets: warm ≤ 1 s, cold ≤ 3 s per page. Prints a table and writes bench/out/pages.json.
``--db`` times another store as it is (e.g. the ten-year store ``bench.store_writes --keep``
leaves), without building anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from demo import generate_demo_files
from store.connection import connected, writing
from store.data_queries import table_counts
from store.layout import years_folder
from store.populations import build_populations
from store.question_texts import load_question_texts
from testbed.fake_runs import TEST_MODELS, FakeModel, add_test_model_runs
from workflows.ingest import ingest_year
from workflows.views import RUNS, VIEWS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
#: Every view the app defines except Runs (it polls run folders and starts processes).
PAGES = tuple(view.file for view in VIEWS if view is not RUNS)
WARM_TARGET, COLD_TARGET = 1.0, 3.0


def _fingerprint(*patterns: str) -> str:
    """A digest of the source files matching ``patterns``: a cached file built by other code
    (another schema, another demo generator) is built again; other changes reuse it."""
    digest = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(ROOT.glob(pattern)):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_database(rows: int, seed: int) -> Path:
    """The full-size database with test model runs, built once per schema and demo generator."""
    db = OUT / f"pages_{rows}.duckdb"
    marker = OUT / f"pages_{rows}.complete"
    built_by = _fingerprint("store/schema.py", "demo/*.py")
    if marker.exists() and db.exists() and marker.read_text() == built_by:
        return db
    files_dir = OUT / f"year_{rows}"
    files_by = _fingerprint("demo/*.py")
    done = files_dir / "complete"
    if not (done.exists() and done.read_text() == files_by):
        print(f"writing a {rows:,}-candidate INEP-format year to {files_dir} (once) …", flush=True)
        generate_demo_files(files_dir, year=2023, n_examinees=rows, seed=seed, progress=True)
        done.write_text(files_by)
    db.unlink(missing_ok=True)
    print(f"ingesting into {db} …", flush=True)
    started = time.monotonic()
    ingest_year(db, 2023, files_dir / "MICRODADOS_ENEM_2023.csv",
                files_dir / "ITENS_PROVA_2023.csv", source="demo", is_synthetic=True,
                progress=True)
    with connected(db) as con:
        load_question_texts(con, files_dir / "questions_demo_2023.jsonl")
    print(f"  ingested in {time.monotonic() - started:.0f} s; adding test model runs …", flush=True)
    extra = (FakeModel("test-mid-it", "testfam-alpha", "3B", True, theta=0.6),
             FakeModel("test-mid-base", "testfam-alpha", "3B", False, theta=0.3, aberrance=0.3),
             FakeModel("test-top-it", "testfam-gamma", "70B", True, theta=2.4))
    add_test_model_runs(db, shuffles=30, models=TEST_MODELS + extra)
    marker.write_text(built_by)
    return db


def ensure_populations(db: Path) -> None:
    """Give a database cached before ``agg_populations`` existed its populations (once, from
    its stored scores; examinee columns added since, such as parents' education, stay empty)."""
    with connected(db, read_only=True) as con:
        tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        if "agg_populations" in tables and con.execute(
                "SELECT count(*) FROM agg_populations").fetchall()[0][0]:
            return
    print(f"building the populations of {db} (once) …", flush=True)
    started = time.monotonic()
    with writing(db, year=2023) as con:
        build_populations(con, 2023)
    print(f"  built in {time.monotonic() - started:.1f} s", flush=True)


def time_page(page: str, repeat: int) -> tuple[float, float]:
    """(cold seconds, median warm seconds) of one page, opened as a link to it would open it."""
    # Both caches: some pages keep objects whose tables fill in as they are asked for.
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).switch_page(page)
    started = time.perf_counter()
    app.run()
    cold = time.perf_counter() - started
    if app.exception:
        raise RuntimeError(f"{page}: {app.exception[0].value}")
    warm = []
    for _ in range(repeat):
        started = time.perf_counter()
        app.run()
        warm.append(time.perf_counter() - started)
    return cold, statistics.median(warm) if warm else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates (default 3.9M)")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per page (median)")
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--page", action="append", choices=PAGES, metavar="PAGE",
                        help="time only this page file (repeatable; default every page)")
    parser.add_argument("--db", type=Path,
                        help="time this store instead (e.g. bench.store_writes' ten-year store; "
                             "no build)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    db = args.db or build_database(args.rows, args.seed)
    if args.db is None:
        ensure_populations(db)
    os.environ["ENEM_DB"] = str(db)
    with connected(db, read_only=True) as con:
        rows = table_counts(con, ["scores", "model_scores"]).set_index("table")["rows"]
    scored, patterns = int(rows["scores"]), int(rows["model_scores"])
    # A store of per-year files is its main file and the year files beside it.
    files = [db, *(years_folder(db).glob("*.duckdb") if years_folder(db).is_dir() else [])]
    size = sum(path.stat().st_size for path in files)
    print(f"database: {db} ({size / 1e9:.2f} GB), {scored:,} scored area records, "
          f"{patterns:,} model patterns")
    time_page("pages/Data.py", 0)  # imports and first connection, not counted
    results = []
    print(f"{'page':36s} {'cold s':>8s} {'warm s':>8s}  cold/3s  warm/1s")
    for page in args.page or PAGES:
        cold, warm = time_page(page, args.repeat)
        results.append({"page": page, "cold_s": round(cold, 3), "warm_s": round(warm, 3)})
        print(f"{page:36s} {cold:8.3f} {warm:8.3f}  {cold / COLD_TARGET:7.2f}  "
              f"{warm / WARM_TARGET:7.2f}", flush=True)
    worst_cold = max(r["cold_s"] for r in results)
    worst_warm = max(r["warm_s"] for r in results)
    print(f"worst: cold {worst_cold:.3f} s (target ≤ {COLD_TARGET} s), warm {worst_warm:.3f} s "
          f"(target ≤ {WARM_TARGET} s)")
    # A run over some pages only keeps the full run's record.
    (OUT / ("pages.json" if not args.page else "pages_some.json")).write_text(json.dumps(
        {"rows": args.rows, "scored_records": scored, "model_patterns": patterns,
         "pages": results}, indent=2))
    return 0 if worst_cold <= COLD_TARGET and worst_warm <= WARM_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
