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


def area_summary(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """Per area: scored candidates, mean and SD of θ, mean nota and CTT."""
    return con.execute(
        """SELECT area, count(*) AS candidates, avg(theta) AS mean_theta,
                  stddev_samp(theta) AS sd_theta, avg(nota) AS mean_nota, avg(ctt) AS mean_ctt
           FROM scores WHERE year = ? GROUP BY area ORDER BY area""",
        [year],
    ).df()


def theta_histogram(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Human θ distribution of one area from the pre-aggregated table: theta_bin, n."""
    return con.execute(
        """SELECT theta_bin, sum(n) AS n FROM agg_theta_ctt
           WHERE year = ? AND area = ? AND group_kind = 'all'
           GROUP BY theta_bin ORDER BY theta_bin""",
        [year, area],
    ).df()


def model_counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(distinct models, runs) in the store."""
    row = one_row(con.execute("SELECT count(DISTINCT model_id), count(*) FROM model_runs"))
    return int(row[0]), int(row[1])


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
