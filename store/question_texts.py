"""Question texts stored per item (CO_ITEM) and language, linked to the booklets' items."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pandas as pd

from store.connection import one_row


def load_question_texts(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Insert (or replace) the texts of a project-format JSONL file; returns rows loaded.

    Each line: year, item_id, language, stem, options (five strings), key, annulled, source.
    """
    con.execute(
        """INSERT OR REPLACE INTO question_texts
           SELECT year, item_id, language, stem, options[1], options[2], options[3], options[4],
                  options[5], key, coalesce(annulled, false), source
           FROM read_json($path, format='newline_delimited',
                columns={year: 'INTEGER', item_id: 'BIGINT', language: 'VARCHAR',
                         stem: 'VARCHAR', options: 'VARCHAR[]', key: 'VARCHAR',
                         annulled: 'BOOLEAN', source: 'VARCHAR', area: 'VARCHAR'})""",
        {"path": str(path)},
    )
    return one_row(con.execute(
        "SELECT count(*) FROM read_json($path, format='newline_delimited')", {"path": str(path)}
    ))[0]


class LinkedText(NamedTuple):
    """A question text with the item it belongs to and that item's key in the item file."""

    question: Any
    item_id: int
    #: TX_GABARITO of the item (``X`` when annulled); None when the item is not in the store.
    item_key: str | None


def link_questions(con: duckdb.DuckDBPyConnection, questions: Iterable[Any],
                   booklets: dict[str, int]) -> tuple[list[LinkedText], list[str]]:
    """Find the CO_ITEM (and item-file key) of each ``Question``.

    A question with ``item_id`` keeps it. Otherwise it is linked by (year, booklet, sorted
    position, LC language), the booklet coming from the question or from ``booklets``
    (area → CO_PROVA). Returns the linked texts and one message per question that could not be
    linked.
    """
    linked, unlinked = [], []
    for question in questions:
        if question.item_id is not None:
            row = con.execute("SELECT any_value(key) FROM items WHERE year = ? AND item_id = ?",
                              [question.year, question.item_id]).fetchone()
            linked.append(LinkedText(question, int(question.item_id), row[0] if row else None))
            continue
        booklet = question.booklet_id or booklets.get(question.area)
        if booklet is None or question.position is None:
            unlinked.append(f"{question.uid}: no booklet for {question.area} (use --booklet "
                            f"{question.area}=CO_PROVA)")
            continue
        found = con.execute(
            """SELECT item_id, key FROM items WHERE year = ? AND booklet_id = ? AND position = ?
                 AND item_language IS NOT DISTINCT FROM ?""",
            [question.year, booklet, question.position, question.item_language],
        ).fetchall()
        if len(found) != 1:
            unlinked.append(f"{question.uid}: no item at position {question.position} of "
                            f"booklet {booklet} in {question.year} (ingest that year first)")
            continue
        linked.append(LinkedText(question, int(found[0][0]), found[0][1]))
    return linked, unlinked


def store_linked_texts(con: duckdb.DuckDBPyConnection, linked: Iterable[LinkedText]) -> int:
    """Insert or replace linked texts; returns the rows written (one per item and language,
    the last text winning when a file gives one item twice)."""
    rows = {}
    for text in linked:
        q = text.question
        rows[(q.year, text.item_id, q.language)] = (
            q.year, text.item_id, q.language, q.stem, *q.options, q.key, q.annulled, q.source)
    if rows:
        con.executemany("INSERT OR REPLACE INTO question_texts VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", list(rows.values()))
    return len(rows)


def item_texts(con: duckdb.DuckDBPyConnection, items: Iterable[tuple[int, int]]
               ) -> pd.DataFrame:
    """The stored texts of the given (year, item_id) pairs, every language: year, item_id,
    language, stem, option_a..option_e."""
    pairs = sorted({(int(year), int(item_id)) for year, item_id in items})
    if not pairs:
        return pd.DataFrame(columns=["year", "item_id", "language", "stem", "option_a",
                                     "option_b", "option_c", "option_d", "option_e"])
    return con.execute(
        """SELECT q.year, q.item_id, q.language, q.stem, q.option_a, q.option_b, q.option_c,
                  q.option_d, q.option_e
           FROM question_texts q
           JOIN (SELECT unnest($years) AS year, unnest($items) AS item_id) w
             ON w.year = q.year AND w.item_id = q.item_id
           ORDER BY q.year, q.item_id, q.language""",
        {"years": [p[0] for p in pairs], "items": [p[1] for p in pairs]},
    ).df()


def store_item_attributes(con: duckdb.DuckDBPyConnection,
                          rows: Iterable[tuple[int, int, bool, bool, bool]],
                          source: str = "derived") -> tuple[int, int]:
    """Write (year, item_id, has_image, numbers_in_statement, numbers_in_options) rows with
    ``source``; a row a user corrected (source 'user') is left as it is.

    Returns (rows written, rows kept because a user corrected them).
    """
    rows = list(rows)
    if not rows:
        return 0, 0
    user = {(int(y), int(i)) for y, i in con.execute(
        """SELECT year, item_id FROM item_attributes
           WHERE source = 'user' AND list_contains($years, year)""",
        {"years": sorted({int(r[0]) for r in rows})}).fetchall()}
    fresh = [(*row, source) for row in rows if (int(row[0]), int(row[1])) not in user]
    if fresh:
        # The WHERE repeats the filter above inside the statement, so a user row written
        # after that read is still never overwritten.
        con.executemany(
            """INSERT INTO item_attributes VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (year, item_id) DO UPDATE SET has_image = excluded.has_image,
                   numbers_in_statement = excluded.numbers_in_statement,
                   numbers_in_options = excluded.numbers_in_options, source = excluded.source
               WHERE item_attributes.source IS DISTINCT FROM 'user'""",
            fresh)
    return len(fresh), len(rows) - len(fresh)
