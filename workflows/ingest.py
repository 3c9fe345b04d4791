"""Ingest one ENEM year: INEP files → examinees, scores, rejects and aggregates, atomically.

The whole year is written in one transaction: a failure at any point rolls back and leaves the
database exactly as it was, and re-ingesting a year replaces it in one step. Files that cannot
be used at all are refused before the database is touched. The SQL lives in
``store.year_tables``; the scoring in ``enem.score_batches`` and ``enem.item_statistics``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from enem.areas import AREAS
from enem.csvfiles import UnusableFileError
from enem.item_statistics import area_item_frames
from enem.items import ItemsTable, load_items
from enem.microdata import detect_layout
from enem.score_batches import (
    AreaAccumulator,
    BatchResult,
    BookletAudit,
    score_batch,
    unreproduced_lines,
)
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from store import year_tables
from store.connection import insert_rows, open_database
from store.histograms import build_histograms

BATCH_ROWS = 250_000
#: The ``ingests.layout`` of a year stored from its item file alone.
ITEMS_ONLY_LAYOUT = "items-only"


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
    booklet_audit: list[BookletAudit] = field(default_factory=list)

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
            out.extend(unreproduced_lines(self.booklet_audit))
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
    year_tables.configure_bulk_session(con)
    summary = IngestSummary(year=year, layout=layout.name)
    try:
        con.execute("BEGIN TRANSACTION")
        ingest_id = year_tables.clear_year(con, year)
        year_tables.write_items(con, year, items, ingest_id)
        summary.rows_read, malformed = year_tables.load_examinees(
            con, year, Path(microdata), layout, encoding, ingest_id)
        summary.rows_read += len(malformed)
        summary.rows_rejected += len(malformed)
        summary.reject_reasons.update(malformed)
        _score_areas(con, year, items, options, batch_rows, progress, ingest_id, summary)
        if summary.records_present and not summary.patterns_scored:
            raise IngestError(
                "no candidate could be scored; most common problems: "
                + "; ".join(f"{r} ({n:,})" for r, n in summary.reject_reasons.most_common(3))
            )
        build_histograms(con, year)
        summary.seconds = time.monotonic() - started
        year_tables.record_ingest(con, ingest_id, {
            "year": summary.year, "source": source, "layout": summary.layout,
            "microdata": str(microdata), "items": str(items_file), "encoding": encoding,
            "seconds": summary.seconds, "rows_read": summary.rows_read,
            "records_present": summary.records_present,
            "patterns_scored": summary.patterns_scored, "rows_rejected": summary.rows_rejected,
            "nota_checked": summary.nota_checked, "nota_matched": summary.nota_matched,
            "is_synthetic": is_synthetic, "scoring": json.dumps(options.as_dict())})
        con.execute("COMMIT")
    except BaseException as error:
        con.execute("ROLLBACK")
        con.close()
        if isinstance(error, (IngestError, UnusableFileError, KeyboardInterrupt)):
            raise
        raise IngestError(f"ingest of {year} stopped and was rolled back: {error}") from error
    con.close()
    return summary


def ingest_items(
    db_path: Path,
    year: int,
    items_file: Path,
    encoding: str = "latin-1",
    source: str = "inep",
    options: ScoringOptions = DEFAULT_OPTIONS,
) -> IngestSummary:
    """Store one year's booklets and item parameters without candidates (no microdata).

    Enough to import published model results or run a model on that year; pages then show the
    models without the human background. Refuses (IngestError, nothing written) a year that
    already holds candidates: replacing their items alone would leave their scores orphaned.
    """
    started = time.monotonic()
    items = load_items(Path(items_file), encoding)
    if not items.forms:
        raise UnusableFileError(f"{items_file}: no booklet can be scored: {_first_problems(items)}")
    con = open_database(Path(db_path))
    summary = IngestSummary(year=year, layout=ITEMS_ONLY_LAYOUT)
    try:
        con.execute("BEGIN TRANSACTION")
        if year_tables.holds_candidates(con, year):
            raise IngestError(
                f"year {year} already holds candidates from a microdata ingest; "
                "`ingest-enem` replaces its items and candidates together")
        ingest_id = year_tables.clear_year(con, year)
        year_tables.write_items(con, year, items, ingest_id)
        summary.seconds = time.monotonic() - started
        year_tables.record_ingest(con, ingest_id, {
            "year": year, "source": source, "layout": ITEMS_ONLY_LAYOUT, "microdata": None,
            "items": str(items_file), "encoding": encoding, "seconds": summary.seconds,
            "rows_read": 0, "records_present": 0, "patterns_scored": 0, "rows_rejected": 0,
            "nota_checked": 0, "nota_matched": 0, "is_synthetic": False,
            "scoring": json.dumps(options.as_dict()), "items_only": True})
        con.execute("COMMIT")
    except BaseException as error:
        con.execute("ROLLBACK")
        con.close()
        if isinstance(error, (IngestError, UnusableFileError, KeyboardInterrupt)):
            raise
        raise IngestError(f"items ingest of {year} stopped and was rolled back: {error}") from error
    con.close()
    return summary


def _first_problems(items: ItemsTable) -> str:
    return "; ".join(f"booklet {b}: {why}" for b, why in list(items.invalid.items())[:3]) or "no rows"


def _score_areas(con, year, items: ItemsTable, options, batch_rows, progress, ingest_id,
                 summary: IngestSummary) -> None:
    summary.records_present = sum(year_tables.present_count(con, year, area) for area in AREAS)
    for reason, count in year_tables.reject_bad_presence(con, year, ingest_id).items():
        summary.rows_rejected += count
        summary.reject_reasons[reason] += count
    bar = tqdm(total=summary.records_present, unit="rec", desc=f"scoring {year}",
               disable=not progress, leave=False)
    for area in AREAS:
        accumulator = AreaAccumulator()
        pending = []
        for batch in year_tables.present_records(con, year, area, batch_rows):
            pending.append(score_batch(batch, year, area, items, accumulator, options))
            bar.update(batch.num_rows)
        for result in pending:
            _store_batch(con, year, area, ingest_id, result, summary)
        summary.nota_checked += accumulator.nota_checked
        summary.nota_matched += accumulator.nota_matched
        summary.booklet_audit.extend(accumulator.audit.values())
        for table, frame in area_item_frames(year, area, items, accumulator).items():
            if frame is not None and len(frame):
                insert_rows(con, table, frame)
    bar.close()
    year_tables.write_booklet_audit(con, year, summary.booklet_audit)


def _store_batch(con, year, area, ingest_id, result: BatchResult,
                 summary: IngestSummary) -> None:
    if result.scores is not None:
        insert_rows(con, "scores", result.scores)
        summary.patterns_scored += result.scores.num_rows
    if result.rejected_ids:
        year_tables.insert_record_rejects(con, ingest_id, year, area, result.rejected_ids,
                                          result.rejected_reasons)
        summary.rows_rejected += len(result.rejected_ids)
        summary.reject_reasons.update(result.rejected_reasons)
