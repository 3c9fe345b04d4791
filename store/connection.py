"""Where the database lives and how to open it.

The path comes from, in order: an explicit argument (the ``--db`` flag), the ``ENEM_DB``
environment variable, or ``data/enem.duckdb`` under the project root.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb

from store.schema import ensure_schema

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB_PATH = PROJECT_ROOT / "data" / "enem.duckdb"
DB_ENV_VAR = "ENEM_DB"


def database_path(explicit: str | os.PathLike | None = None) -> Path:
    """Resolve the database path from the flag, the environment or the default."""
    if explicit:
        return Path(explicit)
    if os.environ.get(DB_ENV_VAR):
        return Path(os.environ[DB_ENV_VAR])
    return DEFAULT_DB_PATH


def open_database(path: Path, read_only: bool = False, wait_seconds: float = 30.0):
    """Open the DuckDB file, creating it and its schema when writing.

    DuckDB lets one process write a file at a time; when another holds the lock this retries
    for ``wait_seconds`` before giving up with a readable error.
    """
    path = Path(path)
    if read_only and not path.exists():
        raise FileNotFoundError(f"no database at {path}; run `enem-llm demo` or ingest a year")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as error:
            if "lock" not in str(error).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    if not read_only:
        ensure_schema(con)
    return con


@contextmanager
def connected(path: Path, read_only: bool = False):
    """Context manager around ``open_database`` that always closes the connection."""
    con = open_database(path, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows) -> None:
    """Append a pandas DataFrame or Arrow table to ``table``, matching columns by name.

    Table columns the rows do not carry are left NULL; a column the table lacks is an error.

    DuckDB finds ``_incoming_rows`` among this function's locals (a replacement scan); the
    private name can never be mistaken for a table.
    """
    _incoming_rows = rows
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming_rows").fetchall()
