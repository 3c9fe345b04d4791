"""Build the embedded demo database: generate a synthetic year, ingest it like real data.

The generated files are in INEP's exact formats and go through the same ingest as a real year,
so the demo exercises every path a researcher's real data will take.
"""

from __future__ import annotations

from pathlib import Path

from demo import generate_demo_files
from inference.plan import RANDOM_BASELINE, RunSpec
from store.connection import PROJECT_ROOT, connected
from store.layout import move_store
from store.question_texts import load_question_texts
from workflows.ingest import IngestSummary, ingest_year
from workflows.results_io import import_results
from workflows.runs.execution import execute_run

DEMO_YEAR = 2023
DEMO_EXAMINEES = 100_000
DEMO_SEED = 2023
#: The demo's generated INEP files live in this folder beside the database they were built for
#: (``data/demo`` for the default database), so two databases never share them.
DEMO_FILES_FOLDER = "demo"
#: Model runs made by this project's pipeline on the demo exam, committed as run exports
#: (see demo/runs/README.md for how each was made); imported into every demo database.
DEMO_RUNS_DIR = PROJECT_ROOT / "demo" / "runs"
#: The random baseline (the paper's Table 1) is cheap enough to run at every build.
RANDOM_BASELINE_SHUFFLES = 30


def build_fresh_demo_database(db_path: Path, **options) -> IngestSummary:
    """Build the demo into a new store beside ``db_path`` and move it into place when complete,
    so an interrupted first start never leaves a half-built database behind."""
    db_path = Path(db_path)
    partial = db_path.with_name(db_path.name + ".building")
    partial.unlink(missing_ok=True)
    summary = build_demo_database(partial, **options)
    move_store(partial, db_path)
    # Nobody else knows the partial file: its writers' lock file can go with it.
    partial.with_name(partial.name + ".writer-lock").unlink(missing_ok=True)
    return summary


def build_demo_database(
    db_path: Path,
    n_examinees: int = DEMO_EXAMINEES,
    seed: int = DEMO_SEED,
    year: int = DEMO_YEAR,
    files_dir: Path | None = None,
    progress: bool = True,
) -> IngestSummary:
    """Generate the demo files under ``files_dir`` (default: ``demo/`` beside ``db_path``) and
    ingest them into ``db_path``."""
    files_dir = Path(files_dir) if files_dir else Path(db_path).parent / DEMO_FILES_FOLDER
    files = generate_demo_files(Path(files_dir), year=year, n_examinees=n_examinees, seed=seed,
                                progress=progress)
    summary = ingest_year(Path(db_path), year, files.microdata, files.items, source="demo",
                          is_synthetic=True, progress=progress)
    with connected(Path(db_path)) as con:
        load_question_texts(con, files.questions)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('demo_seed', ?)", [str(seed)])
        add_demo_runs(con)
    run_random_baseline(Path(db_path), year, Path(files_dir) / "runs")
    return summary


def add_demo_runs(con) -> list[str]:
    """Import the committed demo run exports (re-scored on import, like any import)."""
    run_ids: list[str] = []
    for path in sorted(DEMO_RUNS_DIR.glob("*.parquet")):
        run_ids += import_results(con, path)
    return run_ids


def run_random_baseline(db_path: Path, year: int, runs_dir: Path) -> None:
    """The random-choice baseline on every area, both prompt languages, 0-shot."""
    spec = RunSpec(model=RANDOM_BASELINE, backend="random", year=year,
                   languages=("pt", "en"), shots=(0,), n_shuffles=RANDOM_BASELINE_SHUFFLES,
                   seed=year, family="baseline", instruction_tuned=False)
    execute_run(spec, db_path, runs_dir, batch_items=45)
