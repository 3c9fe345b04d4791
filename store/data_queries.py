"""The Data page's tables: row counts, the ingests, the rejected rows and the model runs with
their settings. Read-only; every value is a bound parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.schema import TABLES


def table_counts(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> pd.DataFrame:
    """Row counts of the named tables (names come from the schema, never from users)."""
    rows = []
    for table in tables:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        count = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        rows.append({"table": table, "rows": int(count)})
    return pd.DataFrame(rows)


def ingest_history(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every ingest, newest first, with its files, timings, counts and whether it is live."""
    return con.execute(
        """SELECT ingest_id, year, source, is_synthetic, layout, microdata_file, items_file,
                  encoding, started_at, finished_at, round(seconds, 1) AS seconds, rows_read,
                  records_present, patterns_scored, rows_rejected, nota_checked, nota_matched,
                  coalesce(items_only, false) AS items_only, scoring,
                  ingest_id = max(ingest_id) OVER (PARTITION BY year) AS live
           FROM ingests ORDER BY ingest_id DESC"""
    ).df()


def reject_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Rejected rows grouped by year, kind, area and reason, most frequent first."""
    return con.execute(
        """SELECT year, kind, coalesce(area, '') AS area, reason, count(*)::BIGINT AS rows
           FROM rejects GROUP BY ALL ORDER BY year, rows DESC"""
    ).df()


def reject_sample(
    con: duckdb.DuckDBPyConnection, year: int, reason: str | None, limit: int = 200
) -> pd.DataFrame:
    """Up to ``limit`` rejected rows of a year, optionally of one reason."""
    return con.execute(
        """SELECT ingest_id, kind, line, examinee_id, area, reason, detail FROM rejects
           WHERE year = $year AND ($reason IS NULL OR reason = $reason)
           ORDER BY kind, line, examinee_id LIMIT $limit""",
        {"year": int(year), "reason": reason, "limit": int(limit)},
    ).df()


def model_run_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Model runs with their series label, model family, settings (prompt type, temperature,
    repetition kind and count, scoring settings as JSON, source file) and how many response
    patterns each has so far."""
    return con.execute(
        """WITH patterns AS (SELECT run_id, count(*) AS patterns FROM model_scores GROUP BY run_id)
           SELECT r.run_id, coalesce(r.label, r.model_id) AS series, r.model_id, mo.family,
                  mo.instruction_tuned, r.backend, r.origin,
                  coalesce(r.years, CAST(r.year AS VARCHAR)) AS years, r.areas, r.languages,
                  r.shots, r.prompt_type, r.temperature,
                  coalesce(r.repetition, 'shuffle') AS repetition, r.n_shuffles AS repetitions,
                  r.status, r.created_at, r.finished_at,
                  coalesce(p.patterns, 0)::BIGINT AS patterns, r.scoring, r.source, r.error
           FROM model_runs r LEFT JOIN models mo USING (model_id)
           LEFT JOIN patterns p USING (run_id)
           ORDER BY r.created_at DESC NULLS LAST, r.run_id"""
    ).df()
