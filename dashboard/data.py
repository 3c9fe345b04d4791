"""Which database file the dashboard reads, whether it can be shown, and its version token.

The token (path, size and modification times) keys every cached query in
:mod:`dashboard.queries`: while nothing writes the file, reruns are served from memory; once a
model run (or an ingest) changes it, the next rerun reads the new rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import streamlit as st

from store import queries
from store.connection import SharedReader, connected, database_path, recent_reader

#: Tables whose presence tells a usable database (created by ``ensure_schema``).
_REQUIRED_TABLES = ("ingests", "agg_theta_ctt", "model_scores", "model_runs")

#: (path, size, mtime of the file, mtime of its WAL); size -1 when there is no file.
Token = tuple[str, int, int, int]


def current_path() -> Path:
    """The database file the dashboard reads (``--db`` is not available here: ENEM_DB/default)."""
    return database_path()


def version_token(path: Path | None = None) -> Token:
    """(path, size, mtime of the file, mtime of its WAL): changes whenever the file is written."""
    path = Path(path or current_path())
    try:
        stat = path.stat()
    except FileNotFoundError:
        return (str(path), -1, -1, -1)
    wal = Path(f"{path}.wal")
    wal_mtime = wal.stat().st_mtime_ns if wal.exists() else 0
    return (str(path), stat.st_size, stat.st_mtime_ns, wal_mtime)



@st.cache_resource(show_spinner=False, max_entries=2)
def shared_reader(token: Token) -> SharedReader:
    """The file of version ``token``, opened once for every session (a new version gets a new
    reader; the previous one is dropped when a second newer one arrives)."""
    return recent_reader(Path(token[0]))

@dataclass(frozen=True)
class DatabaseState:
    """Whether the database can be shown, and if not, why (a sentence for the user)."""

    path: Path
    usable: bool
    has_humans: bool
    problem: str = ""


@st.cache_data(show_spinner=False, max_entries=8)
def _state(token: Token) -> DatabaseState:
    path = Path(token[0])
    if token[1] < 0:
        return DatabaseState(path, False, False,
                             f"No database at `{path}` yet. Open the Home page to build the "
                             "synthetic demo, or run `enem-llm demo`.")
    try:
        with connected(path, read_only=True) as con:
            missing = [t for t in _REQUIRED_TABLES if t not in queries.table_names(con)]
            if missing:
                return DatabaseState(path, False, False,
                                     f"`{path}` is not a database of this project (missing "
                                     f"tables: {', '.join(missing)}).")
            years = queries.ingest_count(con)
    except (duckdb.Error, OSError) as error:
        return DatabaseState(path, False, False, f"Could not open `{path}`: {error}")
    return DatabaseState(path, True, years > 0)


def database_state() -> DatabaseState:
    """The state of the current database file (cached until the file changes)."""
    return _state(version_token())
