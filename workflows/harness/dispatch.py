"""``import-results --format``: which reader a file goes to.

``results`` is the project's own import (a run export or the paper's results parquet,
``workflows.results_io``), unchanged; ``lm-eval`` and ``lighteval`` are the other tools' per-
sample files; ``key-position`` is a file of the paper's key-position experiment. ``auto`` (the
default) reads a ``.jsonl`` file as lm-eval samples, a parquet file with lighteval's details
columns as lighteval details, one with the experiment's columns as a key-position file, and
anything else as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from inference.harness.key_position_file import is_key_position_file
from inference.harness.lighteval_details import is_lighteval_details
from workflows.harness.key_position import import_key_positions
from workflows.harness.lighteval import import_lighteval
from workflows.harness.linking import parse_booklet_flags
from workflows.harness.lm_eval import import_lm_eval
from workflows.imported_runs import ImportSummary, ResultsFormatError
from workflows.results_io import import_results_summary

#: The ``--format`` choices of ``import-results``.
RESULT_FORMATS: tuple[str, ...] = ("auto", "results", "lm-eval", "lighteval", "key-position")
#: The importer of each other tool's format.
HARNESS_IMPORTERS: dict[str, Callable[..., ImportSummary]] = {
    "lm-eval": import_lm_eval, "lighteval": import_lighteval,
    "key-position": import_key_positions,
}


def detect_format(path: Path) -> str:
    """The format ``auto`` reads ``path`` as (see the module docstring)."""
    if path.name.lower().endswith(".jsonl"):
        return "lm-eval"
    if path.suffix.lower() == ".parquet" and path.is_file():
        try:
            columns = pq.ParquetFile(path).schema_arrow.names
        except (OSError, pa.ArrowException):  # the project's import says why, as it always has
            return "results"
        if is_lighteval_details(columns):
            return "lighteval"
        if is_key_position_file(columns):
            return "key-position"
    return "results"


def import_results_file(con, path: Path, file_format: str = "auto",
                        overrides: dict | None = None,
                        booklets: Sequence[str] = ()) -> ImportSummary:
    """Import ``path`` in ``file_format`` (one of :data:`RESULT_FORMATS`); ``booklets`` are
    ``AREA=CO_PROVA`` values linking numbered questions (lm-eval, lighteval only)."""
    path = Path(path)
    chosen = detect_format(path) if file_format == "auto" else file_format
    if chosen == "results":
        if booklets:
            raise ValueError("--booklet applies to lm-eval and lighteval files only")
        return import_results_summary(con, path, overrides)
    if chosen not in HARNESS_IMPORTERS:
        raise ValueError(f"unknown results format {file_format!r}; expected one of "
                         f"{', '.join(RESULT_FORMATS)}")
    if not path.is_file():
        raise ResultsFormatError(f"{path}: no such file")
    return HARNESS_IMPORTERS[chosen](con, path, dict(overrides or {}),
                                     parse_booklet_flags(booklets))
