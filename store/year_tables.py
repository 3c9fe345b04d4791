"""The SQL of ingesting one year: clearing it, loading examinees, storing scores and rejects.

``workflows.ingest`` drives these in one transaction; each function here is one statement (or
a few) against the open connection, every value a bound parameter.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from enem.areas import AREAS
from enem.csvfiles import csv_source_sql
from enem.items import ItemsTable
from enem.microdata import MicrodataLayout
from enem.score_batches import BookletAudit
from store.connection import insert_rows
from store.examinee_sql import examinee_select_sql
from store.schema import YEAR_TABLES

#: DuckDB's temporary table for malformed CSV lines of the microdata file.
CSV_REJECTS = "csv_rejects"
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
    """Delete every row of ``year`` (inside the caller's transaction); returns the next ingest id."""
    for table in YEAR_TABLES:
        con.execute(f"DELETE FROM {table} WHERE year = ?", [year])
    con.execute("DELETE FROM rejects WHERE year = ?", [year])
    return con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests").fetchone()[0]


def holds_candidates(con: duckdb.DuckDBPyConnection, year: int) -> bool:
    """True when ``year`` has examinees from a microdata ingest."""
    return con.execute("SELECT count(*) > 0 FROM examinees WHERE year = ?", [year]).fetchone()[0]


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
            "detail": "booklet " + bad["booklet_id"].astype(str) + ", CO_ITEM "
                      + bad["item_id"].astype(str) + ": " + bad["problem"],
        }))


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


def load_examinees(con: duckdb.DuckDBPyConnection, year: int, microdata: Path,
                   layout: MicrodataLayout, encoding: str, ingest_id: int) -> tuple[int, list]:
    """Stream the microdata CSV into ``examinees``; malformed lines go to ``rejects``.

    Returns (rows inserted, reasons of the malformed lines, one per line).
    """
    source = csv_source_sql(encoding, rejects=CSV_REJECTS)
    columns = {name: "VARCHAR" for name in layout.header}
    con.execute(
        f"INSERT INTO examinees SELECT $year, {examinee_select_sql(layout)} FROM {source}",
        {"year": year, "path": str(microdata), "columns": columns},
    )
    inserted = con.execute(
        "SELECT count(*) FROM examinees WHERE year = ?", [year]).fetchone()[0]
    csv_rejects = con.execute(
        # DuckDB reports a short line once per missing column: keep one row per line.
        f"""SELECT line, arg_min(error_type, column_idx),
                   arg_min(error_message, column_idx) || ': ' || left(any_value(csv_line), 200)
            FROM {CSV_REJECTS} GROUP BY line ORDER BY line"""
    ).fetchall()
    reasons = [f"malformed line ({r[1].lower()})" for r in csv_rejects]
    if csv_rejects:
        insert_rows(con, "rejects", pd.DataFrame({
            "ingest_id": ingest_id, "year": year, "kind": "csv",
            "line": [r[0] for r in csv_rejects], "examinee_id": None, "area": None,
            "reason": reasons, "detail": [r[2] for r in csv_rejects],
        }))
    return inserted, reasons


def present_count(con: duckdb.DuckDBPyConnection, year: int, area: str) -> int:
    """Examinees of ``year`` present (TP_PRESENCA = 1) in ``area``."""
    return con.execute(
        f"SELECT count(*) FROM examinees WHERE year = ? AND presence_{_code(area)} = 1", [year]
    ).fetchone()[0]


def reject_bad_presence(con: duckdb.DuckDBPyConnection, year: int,
                        ingest_id: int) -> dict[str, int]:
    """Reject records whose presence code is missing or unknown; returns reason → count."""
    counts = {}
    for area in AREAS:
        code = _code(area)
        reason = f"TP_PRESENCA_{area} missing or not 0/1/2"
        count = con.execute(
            f"""INSERT INTO rejects
                SELECT ?, year, 'record', NULL, examinee_id, ?, ?, NULL FROM examinees
                WHERE year = ? AND (presence_{code} IS NULL OR presence_{code} NOT IN (0, 1, 2))""",
            [ingest_id, area, reason, year],
        ).fetchone()[0]
        if count:
            counts[reason] = count
    return counts


def present_records(con: duckdb.DuckDBPyConnection, year: int, area: str,
                    batch_rows: int) -> pa.RecordBatchReader:
    """Arrow batches of the present records of one area, in the columns
    ``enem.score_batches.score_batch`` reads."""
    code = _code(area)
    return con.sql(
        f"""SELECT examinee_id, booklet_{code} AS booklet_id, language,
                   responses_{code} AS responses, nota_official_{code} AS nota_official,
                   state, school_type
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
                                      $is_synthetic, $scoring, $items_only)""",
        {"ingest_id": ingest_id, "scoring": None, "items_only": False, **row},
    )


def _code(area: str) -> str:
    """The lower-case column suffix of an area, checked against the known areas."""
    if area not in AREAS:
        raise ValueError(f"unknown area {area!r}")
    return area.lower()
