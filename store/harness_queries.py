"""What importing another tool's answers reads from the store (``workflows.harness``): the
years stored, where a booklet id lives, a year's question texts and the area of items."""

from __future__ import annotations

import duckdb
import pandas as pd


def stored_years(con: duckdb.DuckDBPyConnection) -> set[int]:
    """The exam years with booklets in the store."""
    return {int(row[0]) for row in con.execute("SELECT DISTINCT year FROM booklets").fetchall()}


def booklet_places(con: duckdb.DuckDBPyConnection, booklet_id: int) -> list[tuple[int, str]]:
    """(year, area) of every stored booklet with this CO_PROVA, by year."""
    return [(int(year), str(area)) for year, area in con.execute(
        "SELECT year, area FROM booklets WHERE booklet_id = ? ORDER BY year",
        [int(booklet_id)]).fetchall()]


def year_texts(con: duckdb.DuckDBPyConnection, year: int, language: str) -> pd.DataFrame:
    """Every stored question text of one exam in one language: item_id, stem, option_a..e."""
    return con.execute(
        """SELECT item_id, stem, option_a, option_b, option_c, option_d, option_e
           FROM question_texts WHERE year = ? AND language = ? ORDER BY item_id""",
        [int(year), language]).df()


def item_areas(con: duckdb.DuckDBPyConnection, year: int, item_ids: list[int]) -> dict[int, str]:
    """The area of each of these items of one exam (items not in the store are left out)."""
    return {int(item): str(area) for item, area in con.execute(
        """SELECT DISTINCT item_id, area FROM items
           WHERE year = ? AND list_contains(?, item_id)""",
        [int(year), [int(i) for i in item_ids]]).fetchall()}
