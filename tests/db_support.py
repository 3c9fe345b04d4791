"""Reading a test's database file: open read-only, run one query, close."""

from __future__ import annotations

import pandas as pd

from store.connection import open_reader


def query_rows(db, sql: str, params=()) -> list[tuple]:
    """The rows of ``sql`` on the database file ``db``, as tuples."""
    con = open_reader(db)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def query_frame(db, sql: str, params=()) -> pd.DataFrame:
    """The rows of ``sql`` on the database file ``db``, as a DataFrame."""
    con = open_reader(db)
    try:
        return con.execute(sql, list(params)).df()
    finally:
        con.close()
