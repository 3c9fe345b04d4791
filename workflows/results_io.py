"""Moving model results in and out: the project's run export (``export-run``) and the two
formats ``import-results`` reads, a run export and the paper's published parquet
(``workflows.paper_results``). Both are re-scored on import (``workflows.imported_runs``).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from enem.scoring import ScoringOptions
from inference.run_scoring import NO_LETTER, UNPARSED_MARK
from store.model_runs import (
    RESPONSE_COLUMNS,
    append_run_rows,
    begin_run,
    bulk_import,
    export_run_ids,
    insert_responses_from_parquet,
    parquet_group_rows,
    parquet_groups,
    published_scores,
    stored_run,
)
from workflows.imported_runs import (
    PATTERN_KEYS,
    PUBLISHED_SCORES,
    ImportedRun,
    ImportSummary,
    ResultsFormatError,
    fold_published,
    refuse_without_letters,
    run_scoring_options,
    score_imported,
)
from workflows.paper_results import BATCH_ROWS, PAPER_COLUMNS, import_paper

EXPORT_METADATA_KEY = b"enem_llm_run"


def export_run(con, run_id: str, path: Path) -> int:
    """Write one run's answers (and how it was made) to a Parquet file; returns rows written.

    An imported run's published scores and sampling seeds travel in the file's metadata. The
    file is written beside ``path`` and renamed over it (:func:`write_beside`).
    """
    run, model, responses = stored_run(con, run_id)
    meta = {"run": json.loads(run.to_json(orient="records", date_format="iso"))[0],
            "model": json.loads(model.to_json(orient="records"))[0] if len(model) else {},
            "published_scores": json.loads(
                published_scores(con, run_id).to_json(orient="records"))}
    table = pa.Table.from_pandas(responses, preserve_index=False)
    table = table.replace_schema_metadata({EXPORT_METADATA_KEY: json.dumps(meta).encode()})
    write_beside(Path(path), table)
    return table.num_rows


def write_beside(path: Path, table: pa.Table) -> None:
    """Write ``table`` as Parquet to a new file beside ``path``, then rename it over ``path``.

    A write that fails partway (a full disk) removes the new file and leaves a file already at
    ``path`` exactly as it was: writing over it in place would have cost the old export
    before the new one existed. The new file is hidden (``.NAME.…partial``) until it is whole.
    """
    partial = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.partial")
    try:
        pq.write_table(table, str(partial))
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def import_results(con, path: Path, scoring: ScoringOptions | dict | None = None,
                   batch_rows: int = BATCH_ROWS) -> list[str]:
    """Load a run export or the paper's results parquet; returns the run ids stored.

    See :func:`import_results_summary` for ``scoring`` and for the counts.
    """
    return import_results_summary(con, path, scoring, batch_rows).run_ids


def import_results_summary(con, path: Path, scoring: ScoringOptions | dict | None = None,
                           batch_rows: int = BATCH_ROWS) -> ImportSummary:
    """Load a run export or the paper's results parquet and re-score it.

    ``scoring``: None scores each run with the settings stored for its years; a dict of
    ``ScoringOptions.as_dict`` keys overrides only those settings; a ``ScoringOptions`` is used
    as it is. ValueError when a run's years were stored with different settings and nothing
    chooses one (a run's θ must all be on one scale), and ResultsFormatError (a ValueError)
    naming the column, value and row of the first value that cannot be used.

    The file is streamed (a paper file ``batch_rows`` rows at a time, an export through DuckDB),
    and everything is stored in one transaction: a file refused midway leaves nothing.
    """
    path = Path(path)
    parquet = _open_parquet(path)
    overrides = scoring.as_dict() if isinstance(scoring, ScoringOptions) else dict(scoring or {})
    metadata = parquet.schema_arrow.metadata or {}
    if parquet.metadata.num_rows == 0:
        raise ResultsFormatError(f"{path}: the file has no rows")
    if EXPORT_METADATA_KEY in metadata:
        meta = _export_metadata(path, metadata[EXPORT_METADATA_KEY])
        with bulk_import(con):
            return _import_export(con, path, parquet, meta, overrides)
    missing = [c for c in PAPER_COLUMNS if c not in parquet.schema_arrow.names]
    if missing:
        raise ResultsFormatError(
            f"{path}: not a project run export and missing the paper's column(s) "
            f"{', '.join(missing)}")
    with bulk_import(con):
        return import_paper(con, path.name, parquet, overrides, batch_rows)


def _open_parquet(path: Path) -> pq.ParquetFile:
    if not path.is_file():
        raise ResultsFormatError(f"{path}: no such file")
    try:
        return pq.ParquetFile(path)
    except Exception as error:  # any unreadable file gets the same clear message
        raise ResultsFormatError(f"{path}: not a Parquet file ({error})") from error


def _export_metadata(path: Path, text: bytes) -> dict:
    """The run an export describes (``export_run``), checked enough to be used."""
    try:
        meta = json.loads(text)
        run = meta["run"]
        missing = [key for key in ("run_id", "model_id", "year") if run.get(key) is None]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ResultsFormatError(f"{path}: the run export's description is unreadable "
                                 f"({type(error).__name__}: {error})") from None
    if missing:
        raise ResultsFormatError(f"{path}: the run export's description has no "
                                 f"{', '.join(missing)}")
    return meta


def _import_export(con, path: Path, parquet: pq.ParquetFile, meta: dict,
                   overrides: dict) -> ImportSummary:
    """A run export: its answers go from the file to the store through DuckDB, and each
    (year, booklet) of them is read back alone to be scored."""
    missing = [c for c in RESPONSE_COLUMNS if c not in parquet.schema_arrow.names]
    if missing:
        raise ResultsFormatError(f"{path}: a run export without the column(s) "
                                 f"{', '.join(missing)}")
    refuse_without_letters(path, *_no_letter_counts(parquet))
    run, model = meta["run"], meta.get("model") or {"model_id": meta["run"]["model_id"]}
    others = export_run_ids(con, path, run["run_id"])
    if others:
        raise ResultsFormatError(f"{path}: rows of run(s) {', '.join(others[:3])} in the export "
                                 f"of {run['run_id']}")
    groups = parquet_groups(con, path)
    years = sorted({year for year, _ in groups}) or [int(run["year"])]
    options = run_scoring_options(con, years, overrides)
    published = _exported_published(meta)
    record = {**run, "areas": _split(run["areas"]), "languages": _split(run["languages"]),
              "shots": _split(run["shots"]), "years": years, "scoring": options.as_dict(),
              "origin": run.get("origin") or "imported",
              "options": json.loads(run["options"]) if run.get("options") else {}}
    begin_run(con, record, model)
    insert_responses_from_parquet(con, path)
    rows = 0
    summary = ImportSummary(path.name, [], years, len(groups), [options])
    for year, booklet in groups:
        scores = score_imported(con, parquet_group_rows(con, path, year, booklet), options)
        if len(published):
            scores = scores.merge(published, on=PATTERN_KEYS, how="left", validate="one_to_one")
            fold_published(summary, scores)
        append_run_rows(con, None, scores)
        rows += len(scores)
    summary.runs.append(ImportedRun(run["run_id"], run.get("label") or run["model_id"],
                                    run.get("repetition") or "shuffle", rows))
    return summary


def _no_letter_counts(parquet: pq.ParquetFile) -> tuple[int, int]:
    """(answers without a letter A–E, answers) of a run export, from its ``choice`` column read
    a batch at a time (as ``inference.run_scoring.no_letter_counts`` counts a run's)."""
    marks = pa.array([NO_LETTER, UNPARSED_MARK])
    missing = 0
    for batch in parquet.iter_batches(columns=["choice"]):
        # Cast: a run without any choice (the paper's 0/1 patterns) exports a null column.
        marked = pc.is_in(batch.column(0).cast(pa.string()), value_set=marks)
        missing += int(pc.sum(marked).as_py() or 0)
    return missing, parquet.metadata.num_rows


def _exported_published(meta: dict) -> pd.DataFrame:
    """The published scores an export carries (see ``export_run``), typed; may be empty."""
    published = pd.DataFrame(meta.get("published_scores") or [])
    if published.empty:
        return published
    published["sampling_seed"] = pd.to_numeric(published["sampling_seed"]).astype("Int64")
    for column in PUBLISHED_SCORES.values():
        published[column] = pd.to_numeric(published[column]).astype(float)
    return published


def _split(text) -> list[str]:
    """A comma list of ``model_runs`` as a list ("" and None: empty)."""
    return [part for part in str(text or "").split(",") if part]
