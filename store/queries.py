"""Read-only queries the dashboard and the command line share. Every value is a parameter."""

from __future__ import annotations

import duckdb
import pandas as pd

from store.connection import one_row


def overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per ingested year: source, synthetic flag, candidates, scored patterns, items."""
    return con.execute(
        """
        WITH latest AS (
            SELECT * FROM ingests QUALIFY row_number() OVER (PARTITION BY year
                                                             ORDER BY ingest_id DESC) = 1)
        SELECT l.year, l.source, l.is_synthetic, l.rows_read AS candidates,
               (SELECT count(*) FROM scores s WHERE s.year = l.year) AS scored_patterns,
               (SELECT count(DISTINCT item_id) FROM items i WHERE i.year = l.year) AS items,
               (SELECT count(*) FROM booklets b WHERE b.year = l.year) AS booklets,
               l.rows_rejected AS rejected, l.finished_at AS ingested_at
        FROM latest l ORDER BY l.year
        """
    ).df()


def is_synthetic(con: duckdb.DuckDBPyConnection) -> bool:
    """True when any loaded year came from the synthetic demo generator."""
    row = con.execute("SELECT bool_or(is_synthetic) FROM ingests").fetchone()
    return bool(row and row[0])


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the tables in the open database (to tell a project database from another)."""
    return {row[0] for row in con.execute(
        "SELECT table_name FROM information_schema.tables").fetchall()}


def ingest_count(con: duckdb.DuckDBPyConnection) -> int:
    """How many ingests the database records (0: nothing has been loaded yet)."""
    return int(one_row(con.execute("SELECT count(*) FROM ingests"))[0])


def year_booklets(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """The booklets of one year: booklet_id, area, colour, n_items, valid, problem, note."""
    return con.execute(
        """SELECT booklet_id, area, colour, n_items, valid, problem, note FROM booklets
           WHERE year = ? ORDER BY area, booklet_id""",
        [year],
    ).df()
