"""The SQL of ingesting one year: clearing it, loading examinees, storing scores and rejects.

``workflows.ingest`` drives these in one transaction; each function here is one statement (or
a few) against the open connection, every value a bound parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from enem.areas import AREAS
from enem.csvfiles import REJECT_SAMPLES, csv_source_sql
from enem.items import ItemsTable
from enem.microdata import MicrodataLayout
from enem.score_batches import BookletAudit, booklet_flagged
from store.connection import insert_rows, one_row
from store.examinee_sql import examinee_select_sql, year_filter_sql
from store.populations import GROUPINGS
from store.schema import YEAR_TABLES

#: Bounded memory for full-size years.
MEMORY_LIMIT = "1GB"

_ITEM_COLUMNS = ["year", "booklet_id", "area", "item_language", "position", "co_posicao",
                 "item_id", "key", "skill", "a", "b", "c", "abandoned", "abandon_reason",
                 "adapted", "colour", "problem", "version"]
_BOOKLET_COLUMNS = ["year", "booklet_id", "area", "colour", "n_items", "n_abandoned", "valid",
                    "problem", "note"]


def configure_bulk_session(con: duckdb.DuckDBPyConnection) -> None:
    """Settings for a full-size ingest: bounded memory, no ordering guarantees, no DuckDB bar."""
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    # Insertion order of examinees carries no meaning.
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET enable_progress_bar = false")


def clear_year(con: duckdb.DuckDBPyConnection, year: int) -> int:
    """Delete every row of ``year`` (inside the caller's transaction); returns the next ingest
    id."""
    for table in YEAR_TABLES:
        con.execute(f"DELETE FROM {table} WHERE year = ?", [year])
    con.execute("DELETE FROM rejects WHERE year = ?", [year])
    return one_row(con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests"))[0]


def holds_candidates(con: duckdb.DuckDBPyConnection, year: int) -> bool:
    """True when ``year`` has examinees from a microdata ingest."""
    return one_row(con.execute("SELECT count(*) > 0 FROM examinees WHERE year = ?", [year]))[0]


def write_items(con: duckdb.DuckDBPyConnection, year: int, items: ItemsTable,
                ingest_id: int) -> None:
    """Insert the year's items and booklets; unusable item rows also go to ``rejects``."""
    rows = items.rows.copy()
    rows.insert(0, "year", year)
    insert_rows(con, "items", rows[_ITEM_COLUMNS])
    booklets = items.booklets()
    booklets.insert(0, "year", year)
    insert_rows(con, "booklets", booklets[_BOOKLET_COLUMNS])
    bad = rows[rows["problem"].notna()]
    if len(bad):
        insert_rows(con, "rejects", pd.DataFrame({
            "ingest_id": ingest_id, "year": year, "kind": "item", "line": None,
            "examinee_id": None, "area": bad["area"],
            "reason": "item row unusable; its booklet is not scored",
            # An unusable CO_PROVA or CO_ITEM is NA; "?" keeps the rest of the detail.
            "detail": "booklet " + _shown(bad["booklet_id"]) + ", CO_ITEM "
                      + _shown(bad["item_id"]) + ": " + bad["problem"],
        }))


def _shown(values: pd.Series) -> pd.Series:
    """Whole numbers as text, "?" where missing (NA would blank the whole string)."""
    return values.astype(object).map(lambda v: "?" if pd.isna(v) else str(v))


def write_booklet_audit(con: duckdb.DuckDBPyConnection, year: int,
                        audits: list[BookletAudit]) -> None:
    """One ``booklet_audit`` row per booklet that candidates of ``year`` named.

    A booklet id met in two areas (a file whose booklet mixes areas) is summed into one row,
    under the first area, as the table holds one row per (year, booklet).
    """
    merged: dict[int, BookletAudit] = {}
    for audit in audits:
        row = merged.setdefault(audit.booklet_id, BookletAudit(audit.booklet_id, audit.area))
        row.present += audit.present
        row.scored += audit.scored
        row.nota_checked += audit.nota_checked
        row.nota_matched += audit.nota_matched
    if not merged:
        return
    insert_rows(con, "booklet_audit", pd.DataFrame([
        {"year": year, "booklet_id": a.booklet_id, "area": a.area, "present": a.present,
         "scored": a.scored, "nota_checked": a.nota_checked, "nota_matched": a.nota_matched}
        for a in merged.values()
    ]))


@dataclass(frozen=True)
class YearStanding:
    """What a stored year holds that an ingest must not lose unasked (``workflows.ingest``):
    candidates, scored area records, booklets the item file lets score (``booklets.valid``)
    and booklets whose official notas INEP's recipe reproduces (audited and not flagged:
    ``enem.score_batches.booklet_flagged``). All 0 for a year not stored."""

    examinees: int = 0
    scored: int = 0
    valid_booklets: int = 0
    reproduced_booklets: int = 0


def year_standing(con: duckdb.DuckDBPyConnection, year: int) -> YearStanding:
    """The :class:`YearStanding` of ``year`` (on a reader, or inside a write session on the
    year's new tables)."""
    examinees, scored, valid = one_row(con.execute(
        """SELECT (SELECT count(*) FROM examinees WHERE year = $year),
                  (SELECT count(*) FROM scores WHERE year = $year),
                  (SELECT count(*) FROM booklets WHERE year = $year AND valid)""",
        {"year": int(year)}))
    # A year's few booklets, counted by the flagging rule itself (its SQL twin is tested equal).
    audited = con.execute("""SELECT nota_matched, nota_checked FROM booklet_audit
                             WHERE year = ? AND nota_checked > 0""", [int(year)]).fetchall()
    reproduced = sum(not booklet_flagged(int(matched), int(checked))
                     for matched, checked in audited)
    return YearStanding(int(examinees), int(scored), int(valid), reproduced)


def load_examinees(con: duckdb.DuckDBPyConnection, year: int, microdata: Path,
                   layout: MicrodataLayout, encoding: str, years: list[str]) -> int:
    """Stream the microdata CSV into ``examinees``; returns the rows inserted.

    The reader skips malformed lines and keeps nothing of them (the caller's line scan counts
    them); rows whose NU_ANO is not one of ``years`` are left out.
    """
    return one_row(con.execute(
        f"""INSERT INTO examinees SELECT $year, {examinee_select_sql(layout)}
            FROM {csv_source_sql(encoding, skip_malformed=True)} WHERE {year_filter_sql(layout)}""",
        {"year": year, "path": str(microdata), "columns": _columns(layout), "years": years},
    ))[0]


def drop_duplicate_examinees(con: duckdb.DuckDBPyConnection, year: int, microdata: Path,
                             layout: MicrodataLayout, encoding: str,
                             years: list[str]) -> tuple[int, list[tuple[int, str, int]]]:
    """Keep, of every examinee id that ``year`` holds more than once, the row read first.

    Rows are numbered in file order by re-reading only the duplicated ids with insertion order
    preserved (the 1-based ordinal counts the rows the reader returns). Returns (rows dropped,
    the first REJECT_SAMPLES of them as (ordinal, examinee_id, ordinal of the kept row)).
    """
    con.execute(
        """CREATE OR REPLACE TEMP TABLE duplicate_ids AS
           SELECT examinee_id FROM examinees WHERE year = ? AND examinee_id IS NOT NULL
           GROUP BY examinee_id HAVING count(*) > 1""", [year])
    try:
        if not one_row(con.execute("SELECT count(*) FROM duplicate_ids"))[0]:
            return 0, []
        con.execute("SET preserve_insertion_order = true")
        try:
            con.execute(
                f"""CREATE OR REPLACE TEMP TABLE duplicate_rows AS
                    SELECT ordinal, $year AS year, {examinee_select_sql(layout)} FROM (
                        SELECT row_number() OVER () AS ordinal, *
                        FROM {csv_source_sql(encoding, skip_malformed=True)})
                    WHERE {year_filter_sql(layout)}
                      AND trim({layout.id_column}) IN (SELECT examinee_id FROM duplicate_ids)""",
                {"year": year, "path": str(microdata), "columns": _columns(layout),
                 "years": years})
        finally:
            con.execute("SET preserve_insertion_order = false")
        con.execute("""DELETE FROM examinees WHERE year = ?
                       AND examinee_id IN (SELECT examinee_id FROM duplicate_ids)""", [year])
        con.execute("""INSERT INTO examinees SELECT * EXCLUDE (ordinal) FROM duplicate_rows
                       QUALIFY row_number() OVER (PARTITION BY examinee_id ORDER BY ordinal) = 1""")
        later = """SELECT ordinal, examinee_id,
                          min(ordinal) OVER (PARTITION BY examinee_id) AS kept
                   FROM duplicate_rows QUALIFY ordinal > kept"""
        dropped = one_row(con.execute(f"SELECT count(*) FROM ({later})"))[0]
        samples = con.execute(f"{later} ORDER BY ordinal LIMIT ?", [REJECT_SAMPLES]).fetchall()
        return dropped, [(int(o), str(e), int(k)) for o, e, k in samples]
    finally:
        con.execute("DROP TABLE IF EXISTS duplicate_rows")
        con.execute("DROP TABLE IF EXISTS duplicate_ids")


def insert_line_rejects(con: duckdb.DuckDBPyConnection, ingest_id: int, year: int, reason: str,
                        total: int, samples: list[tuple[int | None, str | None, str]]) -> None:
    """Rejected file lines of one reason: the sample ``(line, examinee_id, detail)`` rows.

    When the sample is smaller than ``total`` the stored reason says so, e.g.
    ``… (3,900,000 lines; the first 100 kept)``, so counting rows never understates it.
    """
    if not samples:
        return
    if total > len(samples):
        reason = f"{reason} ({total:,} lines; the first {len(samples)} kept)"
    insert_rows(con, "rejects", pd.DataFrame({
        "ingest_id": ingest_id, "year": year, "kind": "csv",
        "line": pd.array([line for line, _, _ in samples], dtype="Int64"),
        "examinee_id": [examinee for _, examinee, _ in samples], "area": None,
        "reason": reason, "detail": [detail for _, _, detail in samples],
    }))


def _columns(layout: MicrodataLayout) -> dict[str, str]:
    return {name: "VARCHAR" for name in layout.header}


def present_count(con: duckdb.DuckDBPyConnection, year: int, area: str) -> int:
    """Examinees of ``year`` present (TP_PRESENCA = 1) in ``area``."""
    return one_row(con.execute(
        f"SELECT count(*) FROM examinees WHERE year = ? AND presence_{_code(area)} = 1", [year]
    ))[0]


def reject_bad_presence(con: duckdb.DuckDBPyConnection, year: int,
                        ingest_id: int) -> dict[str, int]:
    """Reject records whose presence code is missing or unknown; returns reason → count."""
    counts = {}
    for area in AREAS:
        code = _code(area)
        reason = f"TP_PRESENCA_{area} missing or not 0/1/2"
        count = one_row(con.execute(
            f"""INSERT INTO rejects
                SELECT ?, year, 'record', NULL, examinee_id, ?, ?, NULL FROM examinees
                WHERE year = ? AND (presence_{code} IS NULL OR presence_{code} NOT IN (0, 1, 2))""",
            [ingest_id, area, reason, year],
        ))[0]
        if count:
            counts[reason] = count
    return counts


def present_records(con: duckdb.DuckDBPyConnection, year: int, area: str,
                    batch_rows: int) -> pa.RecordBatchReader:
    """Arrow batches of the present records of one area, in the columns
    ``enem.score_batches.score_batch`` reads, then every grouping column of
    ``store.populations.GROUPINGS``."""
    code = _code(area)
    groupings = ", ".join(column for column in GROUPINGS.values()
                          if column not in ("state", "school_type"))
    return con.sql(
        f"""SELECT examinee_id, booklet_{code} AS booklet_id, language,
                   responses_{code} AS responses, nota_official_{code} AS nota_official,
                   state, school_type, {groupings}
            FROM examinees WHERE year = $year AND presence_{code} = 1""",
        params={"year": year},
    ).to_arrow_reader(batch_rows)


def insert_record_rejects(con: duckdb.DuckDBPyConnection, ingest_id: int, year: int, area: str,
                          examinee_ids: list[str], reasons: list[str]) -> None:
    """Rejected area records (id and reason) of one scoring batch."""
    n = len(examinee_ids)
    insert_rows(con, "rejects", pa.table({
        "ingest_id": pa.array([ingest_id] * n, pa.int32()),
        "year": pa.array([year] * n, pa.int32()),
        "kind": pa.array(["record"] * n),
        "line": pa.nulls(n, pa.int64()),
        "examinee_id": pa.array(examinee_ids, pa.string()),
        "area": pa.array([area] * n),
        "reason": pa.array(reasons),
        "detail": pa.nulls(n, pa.string()),
    }))


def record_ingest(con: duckdb.DuckDBPyConnection, ingest_id: int, row: dict) -> None:
    """One row of ``ingests``: files, timing and counts (``row`` holds the column values)."""
    con.execute(
        """INSERT INTO ingests VALUES ($ingest_id, $year, $source, $layout, $microdata, $items,
                                      $encoding, now() - to_seconds($seconds), now(), $seconds,
                                      $rows_read, $records_present, $patterns_scored,
                                      $rows_rejected, $nota_checked, $nota_matched,
                                      $is_synthetic, $scoring, $items_only, $audit_scoring)""",
        {"ingest_id": ingest_id, "scoring": None, "items_only": False, "audit_scoring": None,
         **row},
    )


def _code(area: str) -> str:
    """The lower-case column suffix of an area, checked against the known areas."""
    if area not in AREAS:
        raise ValueError(f"unknown area {area!r}")
    return area.lower()
