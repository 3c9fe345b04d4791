"""Reading a test's database file: open read-only, run one query, close."""

from __future__ import annotations

import duckdb
import pandas as pd


def query_rows(db, sql: str, params=()) -> list[tuple]:
    """The rows of ``sql`` on the database file ``db``, as tuples."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def query_frame(db, sql: str, params=()) -> pd.DataFrame:
    """The rows of ``sql`` on the database file ``db``, as a DataFrame."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).df()
    finally:
        con.close()
