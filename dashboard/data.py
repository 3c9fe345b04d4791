"""Cached, read-only access to the store for the pages.

Every call opens the DuckDB file read-only, runs one query from :mod:`store.dashboard_queries`
and closes it again, so a model run in another process can write the file between two queries.
Results are cached with ``st.cache_data`` under a token made of the file's path, size and
modification times: while nothing writes, reruns are served from memory; once a run (or an
ingest) changes the file, the next rerun reads the new rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import streamlit as st

from store import dashboard_queries, queries
from store.connection import connected, database_path

#: Tables whose presence tells a usable database (created by ``ensure_schema``).
_REQUIRED_TABLES = ("ingests", "agg_theta_ctt", "model_scores", "model_runs")


def current_path() -> Path:
    """The database file the dashboard reads (``--db`` is not available here: ENEM_DB/default)."""
    return database_path()


def version_token(path: Path | None = None) -> tuple:
    """(path, size, mtime of the file, mtime of its WAL): changes whenever the file is written."""
    path = Path(path or current_path())
    try:
        stat = path.stat()
    except FileNotFoundError:
        return (str(path), -1, -1, -1)
    wal = Path(f"{path}.wal")
    wal_mtime = wal.stat().st_mtime_ns if wal.exists() else 0
    return (str(path), stat.st_size, stat.st_mtime_ns, wal_mtime)


@dataclass(frozen=True)
class DatabaseState:
    """Whether the database can be shown, and if not, why (a sentence for the user)."""

    path: Path
    usable: bool
    has_humans: bool
    problem: str = ""


@st.cache_data(show_spinner=False, max_entries=8)
def _state(token: tuple) -> DatabaseState:
    path = Path(token[0])
    if token[1] < 0:
        return DatabaseState(path, False, False,
                             f"No database at `{path}` yet. Open the Home page to build the "
                             "synthetic demo, or run `enem-llm demo`.")
    try:
        with connected(path, read_only=True) as con:
            present = {row[0] for row in con.execute(
                "SELECT table_name FROM information_schema.tables").fetchall()}
            missing = [t for t in _REQUIRED_TABLES if t not in present]
            if missing:
                return DatabaseState(path, False, False,
                                     f"`{path}` is not a database of this project (missing "
                                     f"tables: {', '.join(missing)}).")
            years = con.execute("SELECT count(*) FROM ingests").fetchall()[0][0]
    except (duckdb.Error, OSError) as error:
        return DatabaseState(path, False, False, f"Could not open `{path}`: {error}")
    return DatabaseState(path, True, years > 0)


def database_state() -> DatabaseState:
    """The state of the current database file (cached until the file changes)."""
    return _state(version_token())


@st.cache_data(show_spinner=False, max_entries=512)
def _fetch(token: tuple, module: str, name: str, args: tuple, kwargs: tuple) -> Any:
    source = dashboard_queries if module == "dashboard" else queries
    function = getattr(source, name)
    with connected(Path(token[0]), read_only=True) as con:
        return function(con, *args, **dict(kwargs))


def fetch(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``store.dashboard_queries.<name>(con, *args, **kwargs)`` through the cache.

    Arguments must be hashable plain values (lists are turned into tuples for the key and back).
    """
    return _fetch(version_token(), "dashboard", name, _freeze(args), _freeze(tuple(kwargs.items())))


def fetch_shared(name: str, *args: Any) -> Any:
    """Same as :func:`fetch` for the queries shared with the command line (``store.queries``)."""
    return _fetch(version_token(), "shared", name, _freeze(args), ())


def _freeze(values: tuple) -> tuple:
    frozen = []
    for value in values:
        if isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], list):
            value = (value[0], tuple(value[1]))
        frozen.append(value)
    return tuple(frozen)

