"""Ingest one ENEM year: INEP files → examinees, scores, rejects and aggregates, atomically.

The whole year is written in one write session (``store.connection.writing``: a copy of the
store swapped in when it is complete): a failure at any point leaves the database exactly as it
was, re-ingesting a year replaces it in one step, and the dashboard keeps reading the previous
state meanwhile. Files that cannot
be used at all are refused before the database is touched. The SQL lives in
``store.year_tables``; the scoring in ``enem.score_batches`` and ``enem.item_statistics``.

Nothing that fails validation replaces a year:

* every line of the microdata is classified (``enem.microdata.scan_microdata``, in a thread
  beside the load, which keeps DuckDB busy on about one core): a file with no rows, only
  malformed lines, or another year's NU_ANO on most rows is refused before any loaded row is
  used, and the write session's copy of the store is thrown away;
* a year that holds candidates is not replaced by an ingest that would keep fewer than
  SHRINK_LIMIT (90%) of them, nor by a file that ends mid-line (its last line has no line end
  and too few fields) with fewer rows than the year holds, unless ``allow_shrink`` (the
  ``--allow-shrink`` flag) is given. The check runs on the line scan before the loaded rows
  are used and again on the rows actually stored;
* nor is a year replaced by one that is worse in what it can score, unless ``allow_shrink``:
  an item file with fewer valid booklets (``ItemsTable.booklets``: every item usable, its
  parameters in range) than the year holds (checked before anything is loaded, for
  ``ingest_items`` too), or an ingest that scores under SHRINK_LIMIT of the area records per
  candidate that the year scores now, or reproduces the official notas of fewer booklets (the
  booklet audit: audited and not flagged). The synthetic demo, rebuilt at whatever size is asked, is
  exempt from these checks;
* bad lines are all counted by reason (malformed lines, rows of another NU_ANO, later
  repetitions of an examinee id, of which the first line is kept) and the first REJECT_SAMPLES
  of each reason are stored in ``rejects`` with their line numbers.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from tqdm import tqdm

from enem.areas import AREAS
from enem.csvfiles import LineScan, UnusableFileError
from enem.items import ItemsTable, load_items
from enem.microdata import (
    detect_layout,
    duplicate_reason,
    scan_microdata,
    year_reason,
    year_values,
)
from enem.score_batches import BookletAudit, reproduced_share_text, unreproduced_lines
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from store import year_tables
from store.connection import insert_rows, open_reader, writing
from store.year_tables import YearStanding
from workflows.area_scoring import AreaScorer
from workflows.ingest_timing import PhaseTimes

BATCH_ROWS = 250_000
#: Processes scoring areas in parallel (one per core, at most one per area) …
SCORING_WORKERS = max(1, min(len(AREAS), os.cpu_count() or 1))
#: … once the microdata file has this many bytes (about 100,000 candidates; below it,
#: starting them costs more than they save).
PARALLEL_FROM_BYTES = 50_000_000
#: The ``ingests.layout`` of a year stored from its item file alone.
ITEMS_ONLY_LAYOUT = "items-only"
#: Replacing a year with fewer than this share of the candidates it holds, or of the area
#: records it scores, needs allow_shrink.
SHRINK_LIMIT = 0.9
#: How every refusal to make a year worse ends: the consent that overrides it.
SHRINK_CONSENT = "pass --allow-shrink to replace it anyway; the database is unchanged"
#: Reason of the lines the CSV reader skipped beyond those the line scan found: bytes that are
#: not UTF-8 in a column read (with --encoding utf-8), or a line within a byte or two of the
#: maximum line size.
UNSCANNED_REJECT = "malformed line (skipped by the CSV reader, e.g. bytes that are not UTF-8)"


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
    warnings: list[str] = field(default_factory=list)
    #: Seconds per phase (``bench.ingest`` prints them).
    timing: PhaseTimes = field(default_factory=PhaseTimes)

    def reject(self, reason: str, count: int) -> None:
        """Count ``count`` rejected rows or lines of one reason."""
        self.rows_rejected += count
        self.reject_reasons[reason] += count

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        out = [f"  warning: {warning}" for warning in self.warnings]
        out += [
            f"year {self.year} ({self.layout} layout) ingested in {self.seconds:.1f} s",
            f"  rows read:        {self.rows_read:,}",
            f"  area records present: {self.records_present:,}",
            f"  patterns scored:  {self.patterns_scored:,}",
            f"  rows rejected:    {self.rows_rejected:,}",
        ]
        if self.nota_checked:
            share = 100.0 * self.nota_matched / self.nota_checked
            out.append(f"  official NU_NOTA reproduced by INEP's recipe: {self.nota_matched:,} "
                       f"of {self.nota_checked:,} ({share:.2f}%)")
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
    allow_shrink: bool = False,
    workers: int | None = None,
) -> IngestSummary:
    """Read, validate, score and aggregate one year into the database at ``db_path``.

    Raises UnusableFileError (file refused, nothing written) or IngestError (refused or stopped
    midway; the database is unchanged). Rows that cannot be used are counted by reason and a
    sample of each reason is kept in ``rejects``. ``allow_shrink`` lets the ingest replace a
    year with far fewer candidates than it holds, or with one that scores fewer booklets or
    candidates (see the module's docstring). ``workers``
    processes score the areas (default: one per core for a large year, none for a small one);
    the stored rows are the same whatever their number.
    """
    started = time.monotonic()
    microdata, items_file = Path(microdata), Path(items_file)
    if workers is None:
        large = microdata.is_file() and microdata.stat().st_size >= PARALLEL_FROM_BYTES
        workers = SCORING_WORKERS if large else 1
    with AreaScorer(workers, scratch_parent=Path(db_path).parent) as scorer:
        return _ingest_year(started, db_path, year, microdata, items_file, encoding, source,
                            is_synthetic, options, batch_rows, progress, allow_shrink, scorer)


def _ingest_year(started, db_path, year, microdata, items_file, encoding, source, is_synthetic,
                 options, batch_rows, progress, allow_shrink, scorer) -> IngestSummary:
    times = PhaseTimes()
    with times.phase("items file and header"):
        items = load_items(items_file, encoding)
        layout = detect_layout(microdata, encoding)
    if not items.forms:
        raise UnusableFileError(f"{items_file}: no booklet can be scored: {_first_problems(items)}")
    allow_shrink = allow_shrink or is_synthetic
    # The line scan (numpy) runs beside the load (DuckDB, which keeps about one core busy);
    # a file it refuses is refused before the load's rows are used, and the store's copy is
    # thrown away.
    with ThreadPoolExecutor(max_workers=1) as beside, \
            _writing_year(db_path, year, f"ingest of {year}", replace=True) as con:
        previous = _stored_standing(db_path, year)
        if not allow_shrink:  # before the scan starts: a refusal then waits for nothing
            _refuse_fewer_booklets(year, previous, items)
        scanning = beside.submit(_scan, microdata, layout, year, encoding)
        year_tables.configure_bulk_session(con)
        ingest_id = year_tables.clear_year(con, year)
        year_tables.write_items(con, year, items, ingest_id)
        years = list(year_values(year))
        with times.phase("load the CSV into examinees (line scan beside it)"):
            try:
                inserted = year_tables.load_examinees(con, year, microdata, layout, encoding,
                                                      years)
            except duckdb.Error:
                scanning.result()  # a file the scan refuses is reported as such
                raise
            scan, scan_wall, scan_cpu = scanning.result()
        times.add("  line scan (malformed lines, NU_ANO), beside it", scan_wall, scan_cpu)
        summary = IngestSummary(year=year, layout=layout.name, rows_read=scan.lines,
                                timing=times)
        if not scan.ends_with_newline:
            summary.warnings.append(_cut_short(scan) + ": the file may be cut short")
        usable = scan.well_formed - scan.off_value.count
        if not allow_shrink:
            _refuse_shrink(year, previous.examinees, usable, scan)
        _line_rejects(con, ingest_id, year, scan, inserted, summary)
        with times.phase("repeated ids"):
            dropped, samples = year_tables.drop_duplicate_examinees(
                con, year, microdata, layout, encoding, years)
        if dropped:
            reason = duplicate_reason(layout)
            year_tables.insert_line_rejects(con, ingest_id, year, reason, dropped,
                                            _duplicate_samples(scan, samples))
            summary.reject(reason, dropped)
        stored = inserted - dropped
        if stored == 0:
            raise IngestError(f"{microdata}: no row could be stored; the year is unchanged")
        if not allow_shrink:
            _refuse_shrink(year, previous.examinees, stored, scan, dropped)
        _score_areas(con, year, items, options, batch_rows, progress, ingest_id, summary,
                     scorer)
        if summary.records_present and not summary.patterns_scored:
            raise IngestError(
                "no candidate could be scored; most common problems: "
                + "; ".join(f"{r} ({n:,})" for r, n in summary.reject_reasons.most_common(3))
            )
        if not allow_shrink:
            _refuse_worse_scoring(year, previous, year_tables.year_standing(con, year))
        summary.seconds = time.monotonic() - started
        year_tables.record_ingest(con, ingest_id, {
            "year": summary.year, "source": source, "layout": summary.layout,
            "microdata": str(microdata), "items": str(items_file), "encoding": encoding,
            "seconds": summary.seconds, "rows_read": summary.rows_read,
            "records_present": summary.records_present,
            "patterns_scored": summary.patterns_scored, "rows_rejected": summary.rows_rejected,
            "nota_checked": summary.nota_checked, "nota_matched": summary.nota_matched,
            "is_synthetic": is_synthetic, "scoring": json.dumps(options.as_dict()),
            "audit_scoring": json.dumps(DEFAULT_OPTIONS.as_dict())})
        committing = time.monotonic(), time.process_time()
    times.add("commit (checkpoint, swap in)", time.monotonic() - committing[0],
              time.process_time() - committing[1])
    return summary


def _scan(microdata: Path, layout, year: int, encoding: str) -> tuple[LineScan, float, float]:
    """``scan_microdata`` with its wall-clock and CPU seconds (of its own threads)."""
    started = time.monotonic()
    scan = scan_microdata(microdata, layout, year, encoding)
    return scan, time.monotonic() - started, scan.cpu_seconds


def _duplicate_samples(scan: LineScan, samples: list[tuple[int, str, int]]):
    """(line, examinee id, "first on line N") of repeated rows given by reader ordinals."""
    dropped = scan.row_lines([ordinal for ordinal, _, _ in samples])
    kept = scan.row_lines([first for _, _, first in samples])
    return [(int(line), examinee, f"first on line {int(first)}")
            for line, first, (_, examinee, _) in zip(dropped, kept, samples, strict=True)]


def _cut_short(scan: LineScan) -> str:
    return (f"the last line (line {scan.last_line:,}, {scan.last_line_fields} of "
            f"{scan.n_fields} fields) has no line end")


def _refuse_shrink(year: int, previous: int, rows: int, scan: LineScan, dropped: int = 0) -> None:
    """IngestError when ``rows`` usable rows would replace a year holding ``previous``
    candidates with under SHRINK_LIMIT of them, or with fewer from a file that ends mid-line."""
    if not previous:
        return
    cut = not scan.ends_with_newline and scan.last_line_fields < scan.n_fields
    if rows >= SHRINK_LIMIT * previous and not (cut and rows < previous):
        return
    after = f" after dropping {dropped:,} repeated ids" if dropped else ""
    first = (f"refusing to replace year {year}: the new file has {rows:,} usable rows{after}, "
             f"{100 * rows / previous:.0f}% of the {previous:,} candidates the year holds now "
             f"(the limit is {SHRINK_LIMIT:.0%})")
    why = [first]
    if cut:
        why.append(_cut_short(scan) + ", so the file looks cut short")
    if scan.malformed_count:
        why.append(f"{scan.malformed_count:,} lines are malformed")
    why.append(SHRINK_CONSENT)
    raise IngestError("; ".join(why))


def _refuse_fewer_booklets(year: int, previous: YearStanding, items: ItemsTable) -> None:
    """IngestError when ``items`` has fewer valid booklets than the year holds now."""
    valid = int(items.booklets()["valid"].sum())
    if valid >= previous.valid_booklets:
        return
    raise IngestError(
        f"refusing to replace year {year}: the new item file has {valid:,} valid booklets, "
        f"fewer than the {previous.valid_booklets:,} the year holds now "
        f"({_first_problems(items)}); {SHRINK_CONSENT}")


def _refuse_worse_scoring(year: int, previous: YearStanding, new: YearStanding) -> None:
    """IngestError when the ingest in progress (``new``, read in its write session) scores
    under SHRINK_LIMIT of the area records the year's candidates are scored in now, per
    candidate (the count of candidates has its own check, ``_refuse_shrink``; a file of 90%
    of them scores about 90% of the records), or reproduces the official notas of fewer
    booklets (see the module's docstring)."""
    why = []
    # What the year's present rate, scored records per candidate, gives the new candidates.
    expected = previous.scored * new.examinees / previous.examinees if previous.examinees else 0
    if new.scored < SHRINK_LIMIT * expected:
        why.append(f"it would score {new.scored:,} area records of its {new.examinees:,} "
                   f"candidates, {new.scored / expected:.0%} of the {expected:,.0f} they would "
                   f"have at the rate the year scores now ({previous.scored:,} records of "
                   f"{previous.examinees:,} candidates; the limit is {SHRINK_LIMIT:.0%})")
    if new.reproduced_booklets < previous.reproduced_booklets:
        why.append(f"INEP's recipe would reproduce the official NU_NOTA of "
                   f"{new.reproduced_booklets:,} booklets (at least "
                   f"{reproduced_share_text()} of their candidates), fewer than the "
                   f"{previous.reproduced_booklets:,} it reproduces now")
    if why:
        raise IngestError(f"refusing to replace year {year}: " + "; ".join(why)
                          + f"; {SHRINK_CONSENT}")


def _line_rejects(con, ingest_id: int, year: int, scan: LineScan, inserted: int,
                  summary: IngestSummary) -> None:
    """Count the lines the reader skipped or the NU_ANO check left out, and store samples."""
    tallies = dict(scan.malformed)
    if scan.off_value.count:
        tallies[year_reason(year)] = scan.off_value
    for reason, tally in tallies.items():
        year_tables.insert_line_rejects(con, ingest_id, year, reason, tally.count,
                                        [(line, None, text) for line, text in tally.samples])
        summary.reject(reason, tally.count)
    expected = scan.well_formed - scan.off_value.count
    if inserted < expected:
        # Lines whose bytes are not UTF-8 in a column the load reads, or within a byte or two
        # of the maximum line size (DuckDB's limit depends on where a line falls in its buffers).
        summary.reject(UNSCANNED_REJECT, expected - inserted)
        summary.warnings.append(f"the CSV reader skipped {expected - inserted:,} lines the line "
                                "scan took as well-formed; they are counted, not listed")
    elif inserted > expected:
        summary.warnings.append(f"the CSV reader read {inserted - expected:,} lines the line "
                                "scan counted as rejects; the reject counts overstate them")


def _stored_standing(db_path: Path, year: int) -> YearStanding:
    """What the live store holds for ``year`` (read before the write replaces it)."""
    if not Path(db_path).exists():
        return YearStanding()
    con = open_reader(Path(db_path))
    try:
        return year_tables.year_standing(con, year)
    finally:
        con.close()


@contextmanager
def _writing_year(db_path: Path, year: int, what: str, replace: bool = False
                  ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A write session on the store and its ``year`` (``store.connection.writing``; with
    ``replace`` the year's tables start empty): everything done in it appears at once when it
    ends, and nothing when it raises. Unexpected failures become one IngestError naming
    ``what`` stopped."""
    try:
        with writing(Path(db_path), year=year, replace_year=replace) as con:
            yield con
    except (IngestError, UnusableFileError):
        raise
    except Exception as error:
        raise IngestError(f"{what} stopped and was rolled back; the database is unchanged: "
                          f"{error}") from error


def ingest_items(
    db_path: Path,
    year: int,
    items_file: Path,
    encoding: str = "latin-1",
    source: str = "inep",
    options: ScoringOptions = DEFAULT_OPTIONS,
    allow_shrink: bool = False,
) -> IngestSummary:
    """Store one year's booklets and item parameters without candidates (no microdata).

    Enough to import published model results or run a model on that year; pages then show the
    models without the human background. Refuses (IngestError, nothing written) a year that
    already holds candidates: replacing their items alone would leave their scores orphaned;
    and, unless ``allow_shrink``, an item file with fewer valid booklets than the year holds.
    """
    started = time.monotonic()
    items = load_items(Path(items_file), encoding)
    if not items.forms:
        raise UnusableFileError(f"{items_file}: no booklet can be scored: {_first_problems(items)}")
    summary = IngestSummary(year=year, layout=ITEMS_ONLY_LAYOUT)
    with _writing_year(db_path, year, f"items ingest of {year}") as con:
        if year_tables.holds_candidates(con, year):
            raise IngestError(
                f"year {year} already holds candidates from a microdata ingest; "
                "`ingest-enem` replaces its items and candidates together")
        if not allow_shrink:
            _refuse_fewer_booklets(year, year_tables.year_standing(con, year), items)
        ingest_id = year_tables.clear_year(con, year)
        year_tables.write_items(con, year, items, ingest_id)
        summary.seconds = time.monotonic() - started
        year_tables.record_ingest(con, ingest_id, {
            "year": year, "source": source, "layout": ITEMS_ONLY_LAYOUT, "microdata": None,
            "items": str(items_file), "encoding": encoding, "seconds": summary.seconds,
            "rows_read": 0, "records_present": 0, "patterns_scored": 0, "rows_rejected": 0,
            "nota_checked": 0, "nota_matched": 0, "is_synthetic": False,
            "scoring": json.dumps(options.as_dict()), "items_only": True})
    return summary


def _first_problems(items: ItemsTable) -> str:
    first = list(items.invalid.items())[:3]
    return "; ".join(f"booklet {b}: {why}" for b, why in first) or "no rows"


def _score_areas(con, year, items: ItemsTable, options, batch_rows, progress, ingest_id,
                 summary: IngestSummary, scorer: AreaScorer) -> None:
    present = {area: year_tables.present_count(con, year, area) for area in AREAS}
    summary.records_present = sum(present.values())
    for reason, count in year_tables.reject_bad_presence(con, year, ingest_id).items():
        summary.reject(reason, count)
    bar = tqdm(total=summary.records_present, unit="rec", desc=f"scoring {year}",
               disable=not progress, leave=False)

    def read_area(area: str):
        return year_tables.present_records(con, year, area, batch_rows)

    times = summary.timing
    largest_first = sorted(AREAS, key=lambda area: -present[area])
    with times.phase("scoring (here: records out, rows in)"):
        _store_areas(con, scorer.score_areas(read_area, year, items, options, times,
                                             largest_first), ingest_id, year, summary, bar)
    bar.close()
    year_tables.write_booklet_audit(con, year, summary.booklet_audit)


def _store_areas(con, areas, ingest_id: int, year: int, summary: IngestSummary, bar) -> None:
    """Store each area's score rows, rejects and tables as the workers hand them back; count
    its rejects and audit in the summary in AREAS order (their order in the summary lines)."""
    counted = {}
    for scored in areas:
        with summary.timing.phase("  of which storing the rows"):
            _store_area(con, scored, ingest_id, year, summary)
        counted[scored.area] = (scored.rejected_reasons, scored.audit)
        bar.update(scored.records)
    for area in AREAS:
        reasons, audit = counted.get(area, ([], []))
        summary.reject_reasons.update(reasons)
        summary.booklet_audit.extend(audit)


def _store_area(con, scored, ingest_id: int, year: int, summary: IngestSummary) -> None:
    summary.timing.add_worker(scored.cpu)
    if scored.scores is not None:
        insert_rows(con, "scores", scored.scores)
        summary.patterns_scored += scored.scores.num_rows
    if scored.rejected_ids:
        year_tables.insert_record_rejects(con, ingest_id, year, scored.area,
                                          scored.rejected_ids, scored.rejected_reasons)
        summary.rows_rejected += len(scored.rejected_ids)
    summary.nota_checked += scored.nota_checked
    summary.nota_matched += scored.nota_matched
    for table, frame in scored.frames.items():
        if frame is not None and len(frame):
            insert_rows(con, table, frame)
