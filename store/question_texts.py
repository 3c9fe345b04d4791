"""Question texts in the project's JSONL format, stored per item and language."""

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
