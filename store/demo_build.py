"""Build the embedded demo database: generate a synthetic year, ingest it like real data.

The generated files are in INEP's exact formats and go through the same ingest as a real year,
so the demo exercises every path a researcher's real data will take.
"""

from __future__ import annotations

from pathlib import Path

from store.connection import PROJECT_ROOT, connected
from store.ingest import IngestSummary, ingest_year
from store.question_texts import load_question_texts

DEMO_YEAR = 2023
DEMO_EXAMINEES = 100_000
DEMO_SEED = 2023
DEMO_FILES_DIR = PROJECT_ROOT / "data" / "demo"


def build_demo_database(
    db_path: Path,
    n_examinees: int = DEMO_EXAMINEES,
    seed: int = DEMO_SEED,
    year: int = DEMO_YEAR,
    files_dir: Path = DEMO_FILES_DIR,
    progress: bool = True,
) -> IngestSummary:
    """Generate the demo files under ``files_dir`` and ingest them into ``db_path``."""
    from demo import generate_demo_files

    files = generate_demo_files(Path(files_dir), year=year, n_examinees=n_examinees, seed=seed,
                                progress=progress)
    summary = ingest_year(Path(db_path), year, files.microdata, files.items, source="demo",
                          is_synthetic=True, progress=progress)
    with connected(Path(db_path)) as con:
        load_question_texts(con, files.questions)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('demo_seed', ?)", [str(seed)])
    return summary
