"""Question texts stored per item (CO_ITEM) and language, linked to the booklets' items."""

from __future__ import annotations

from pathlib import Path

import duckdb


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
    return con.execute(
        "SELECT count(*) FROM read_json($path, format='newline_delimited')", {"path": str(path)}
    ).fetchone()[0]


def store_questions(con: duckdb.DuckDBPyConnection, questions, booklets: dict[str, int]
                    ) -> tuple[int, list[str]]:
    """Insert or replace ``Question`` texts, linking each to its CO_ITEM.

    A question with ``item_id`` is stored as is. Otherwise it is linked by (year, booklet,
    sorted position, LC language), the booklet coming from the question or from ``booklets``
    (area → CO_PROVA). Returns (rows stored, one message per question that could not be linked).
    """
    rows, unlinked = [], []
    for question in questions:
        item_id = question.item_id
        if item_id is None:
            booklet = question.booklet_id or booklets.get(question.area)
            if booklet is None or question.position is None:
                unlinked.append(f"{question.uid}: no booklet for {question.area} (use --booklet "
                                f"{question.area}=CO_PROVA)")
                continue
            found = con.execute(
                """SELECT item_id FROM items WHERE year = ? AND booklet_id = ? AND position = ?
                     AND item_language IS NOT DISTINCT FROM ?""",
                [question.year, booklet, question.position, question.item_language],
            ).fetchall()
            if len(found) != 1:
                unlinked.append(f"{question.uid}: no item at position {question.position} of "
                                f"booklet {booklet} in {question.year} (ingest that year first)")
                continue
            item_id = found[0][0]
        rows.append((question.year, item_id, question.language, question.stem,
                     *question.options, question.key, question.annulled, question.source))
    if rows:
        con.executemany("INSERT OR REPLACE INTO question_texts VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows), unlinked
