"""Ingest one ENEM year: INEP files → examinees, scores, rejects and aggregates, atomically.

The whole year is written in one transaction: a failure at any point rolls back and leaves the
database exactly as it was, and re-ingesting a year replaces it in one step. Files that cannot
be used at all are refused before the database is touched.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
from tqdm import tqdm

from enem.areas import AREAS
from enem.csvfiles import UnusableFileError, csv_source_sql
from enem.items import ItemsTable, load_items
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from store.connection import insert_rows, open_database
from store.histograms import build_histograms
from store.item_aggregates import area_item_frames
from store.microdata import MicrodataLayout, detect_layout, examinee_select_sql
from store.schema import YEAR_TABLES
from store.scoring_pass import AreaAccumulator, score_batch

BATCH_ROWS = 250_000
MEMORY_LIMIT = "1GB"
_CSV_REJECTS = "csv_rejects"


class IngestError(RuntimeError):
    """The ingest stopped; the database is unchanged. The message says why."""


@dataclass
class IngestSummary:
    """What one ingest did, printed by the command line and stored in ``ingests``."""

    year: int
    layout: str
    rows_read: int = 0
    records_present: int = 0
    patterns_scored: int = 0
    rows_rejected: int = 0
    nota_checked: int = 0
    nota_matched: int = 0
    seconds: float = 0.0
    reject_reasons: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        out = [
            f"year {self.year} ({self.layout} layout) ingested in {self.seconds:.1f} s",
            f"  rows read:        {self.rows_read:,}",
            f"  area records present: {self.records_present:,}",
            f"  patterns scored:  {self.patterns_scored:,}",
            f"  rows rejected:    {self.rows_rejected:,}",
        ]
        if self.nota_checked:
            share = 100.0 * self.nota_matched / self.nota_checked
            out.append(f"  official NU_NOTA reproduced: {self.nota_matched:,} of "
                       f"{self.nota_checked:,} ({share:.2f}%)")
        for reason, count in self.reject_reasons.most_common(8):
            out.append(f"    {count:,} × {reason}")
        return out


def ingest_year(
    db_path: Path,
    year: int,
    microdata: Path,
    items_file: Path,
    encoding: str = "latin-1",
    source: str = "inep",
    is_synthetic: bool = False,
    options: ScoringOptions = DEFAULT_OPTIONS,
    batch_rows: int = BATCH_ROWS,
    progress: bool = True,
) -> IngestSummary:
    """Read, validate, score and aggregate one year into the database at ``db_path``.

    Raises UnusableFileError (file refused, nothing written) or IngestError (stopped midway,
    rolled back). Rows that cannot be used are counted and kept in ``rejects`` with a reason.
    """
    started = time.monotonic()
    items = load_items(Path(items_file), encoding)
    layout = detect_layout(Path(microdata), encoding)
    if not items.forms:
        raise UnusableFileError(f"{items_file}: no booklet can be scored: {_first_problems(items)}")
    con = open_database(Path(db_path))
    # Bounded memory for full-size years; insertion order of examinees carries no meaning.
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET enable_progress_bar = false")  # the ingest draws its own
    summary = IngestSummary(year=year, layout=layout.name)
    try:
        con.execute("BEGIN TRANSACTION")
        for table in YEAR_TABLES:
            con.execute(f"DELETE FROM {table} WHERE year = ?", [year])
        con.execute("DELETE FROM rejects WHERE year = ?", [year])
        ingest_id = con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests").fetchone()[0]
        _write_items(con, year, items, ingest_id)
        _load_examinees(con, year, Path(microdata), layout, encoding, ingest_id, summary)
        _score_areas(con, year, items, options, batch_rows, progress, ingest_id, summary)
        if summary.records_present and not summary.patterns_scored:
            raise IngestError(
                "no candidate could be scored; most common problems: "
                + "; ".join(f"{r} ({n:,})" for r, n in summary.reject_reasons.most_common(3))
            )
        build_histograms(con, year)
        summary.seconds = time.monotonic() - started
        _record_ingest(con, ingest_id, summary, microdata, items_file, encoding, source, is_synthetic)
        con.execute("COMMIT")
    except BaseException as error:
        con.execute("ROLLBACK")
        con.close()
        if isinstance(error, (IngestError, UnusableFileError, KeyboardInterrupt)):
            raise
        raise IngestError(f"ingest of {year} stopped and was rolled back: {error}") from error
    con.close()
    return summary


def _first_problems(items: ItemsTable) -> str:
    return "; ".join(f"booklet {b}: {why}" for b, why in list(items.invalid.items())[:3]) or "no rows"


def _write_items(con, year: int, items: ItemsTable, ingest_id: int) -> None:
    rows = items.rows.copy()
    rows.insert(0, "year", year)
    columns = ["year", "booklet_id", "area", "item_language", "position", "co_posicao", "item_id",
               "key", "skill", "a", "b", "c", "abandoned", "abandon_reason", "adapted", "colour",
               "problem"]
    insert_rows(con, "items", rows[columns])
    booklets = items.booklets()
    booklets.insert(0, "year", year)
    insert_rows(con, "booklets", booklets[["year", "booklet_id", "area", "colour", "n_items",
                                           "n_abandoned", "valid", "problem"]])
    bad = rows[rows["problem"].notna()]
    if len(bad):
        reject_rows = pd.DataFrame({
            "ingest_id": ingest_id, "year": year, "kind": "item", "line": None,
            "examinee_id": None, "area": bad["area"],
            "reason": "item row unusable; its booklet is not scored",
            "detail": "booklet " + bad["booklet_id"].astype(str) + ", CO_ITEM "
                      + bad["item_id"].astype(str) + ": " + bad["problem"],
        })
        insert_rows(con, "rejects", reject_rows)


def _load_examinees(con, year, microdata: Path, layout: MicrodataLayout, encoding, ingest_id,
                    summary: IngestSummary) -> None:
    source = csv_source_sql(encoding, rejects=_CSV_REJECTS)
    columns = {name: "VARCHAR" for name in layout.header}
    con.execute(
        f"INSERT INTO examinees SELECT $year, {examinee_select_sql(layout)} FROM {source}",
        {"year": year, "path": str(microdata), "columns": columns},
    )
    summary.rows_read = con.execute(
        "SELECT count(*) FROM examinees WHERE year = ?", [year]).fetchone()[0]
    csv_rejects = con.execute(
        # DuckDB reports a short line once per missing column: keep one row per line.
        f"""SELECT line, arg_min(error_type, column_idx),
                   arg_min(error_message, column_idx) || ': ' || left(any_value(csv_line), 200)
            FROM {_CSV_REJECTS} GROUP BY line ORDER BY line"""
    ).fetchall()
    if csv_rejects:
        frame = pd.DataFrame({
            "ingest_id": ingest_id, "year": year, "kind": "csv",
            "line": [r[0] for r in csv_rejects], "examinee_id": None, "area": None,
            "reason": [f"malformed line ({r[1].lower()})" for r in csv_rejects],
            "detail": [r[2] for r in csv_rejects],
        })
        insert_rows(con, "rejects", frame)
        summary.rows_read += len(csv_rejects)
        summary.rows_rejected += len(csv_rejects)
        summary.reject_reasons.update(frame["reason"])


def _score_areas(con, year, items: ItemsTable, options, batch_rows, progress, ingest_id,
                 summary: IngestSummary) -> None:
    present = {
        area: con.execute(
            f"SELECT count(*) FROM examinees WHERE year = ? AND presence_{area.lower()} = 1", [year]
        ).fetchone()[0]
        for area in AREAS
    }
    summary.records_present = sum(present.values())
    _reject_bad_presence(con, year, ingest_id, summary)
    bar = tqdm(total=summary.records_present, unit="rec", desc=f"scoring {year}",
               disable=not progress, leave=False)
    for area in AREAS:
        accumulator = AreaAccumulator()
        code = area.lower()
        reader = con.sql(
            f"""SELECT examinee_id, booklet_{code} AS booklet_id, language,
                       responses_{code} AS responses, nota_official_{code} AS nota_official,
                       state, school_type
                FROM examinees WHERE year = $year AND presence_{code} = 1""",
            params={"year": year},
        ).to_arrow_reader(batch_rows)
        pending = []
        for batch in reader:
            result = score_batch(batch, year, area, items, accumulator, options)
            pending.append(result)
            bar.update(batch.num_rows)
        for result in pending:
            _store_batch(con, year, area, ingest_id, result, summary)
        summary.nota_checked += accumulator.nota_checked
        summary.nota_matched += accumulator.nota_matched
        for table, frame in area_item_frames(year, area, items, accumulator).items():
            if frame is not None and len(frame):
                insert_rows(con, table, frame)
    bar.close()


def _store_batch(con, year, area, ingest_id, result, summary: IngestSummary) -> None:
    if result.scores is not None:
        insert_rows(con, "scores", result.scores)
        summary.patterns_scored += result.scores.num_rows
    if result.rejected_ids:
        rejected = pa.table({
            "ingest_id": pa.array([ingest_id] * len(result.rejected_ids), pa.int32()),
            "year": pa.array([year] * len(result.rejected_ids), pa.int32()),
            "kind": pa.array(["record"] * len(result.rejected_ids)),
            "line": pa.nulls(len(result.rejected_ids), pa.int64()),
            "examinee_id": pa.array(result.rejected_ids, pa.string()),
            "area": pa.array([area] * len(result.rejected_ids)),
            "reason": pa.array(result.rejected_reasons),
            "detail": pa.nulls(len(result.rejected_ids), pa.string()),
        })
        insert_rows(con, "rejects", rejected)
        summary.rows_rejected += len(result.rejected_ids)
        summary.reject_reasons.update(result.rejected_reasons)


def _reject_bad_presence(con, year, ingest_id, summary: IngestSummary) -> None:
    for area in AREAS:
        code = area.lower()
        reason = f"TP_PRESENCA_{area} missing or not 0/1/2"
        count = con.execute(
            f"""INSERT INTO rejects
                SELECT ?, year, 'record', NULL, examinee_id, ?, ?, NULL FROM examinees
                WHERE year = ? AND (presence_{code} IS NULL OR presence_{code} NOT IN (0, 1, 2))""",
            [ingest_id, area, reason, year],
        ).fetchone()[0]
        if count:
            summary.rows_rejected += count
            summary.reject_reasons[reason] += count


def _record_ingest(con, ingest_id, summary: IngestSummary, microdata, items_file, encoding,
                   source, is_synthetic) -> None:
    con.execute(
        """INSERT INTO ingests VALUES (?, ?, ?, ?, ?, ?, ?, now() - to_seconds(?), now(), ?,
                                      ?, ?, ?, ?, ?, ?, ?)""",
        [ingest_id, summary.year, source, summary.layout, str(microdata), str(items_file),
         encoding, summary.seconds, summary.seconds, summary.rows_read, summary.records_present,
         summary.patterns_scored, summary.rows_rejected, summary.nota_checked,
         summary.nota_matched, is_synthetic],
    )
