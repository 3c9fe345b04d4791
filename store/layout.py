"""A store of per-year files: the year tables of each ENEM year in a file of their own.

::

    data/enem.duckdb                          runs, metadata, and which file holds each year
    data/enem.duckdb.years/2023-1f0c….duckdb  every year table's rows of 2023 (YEAR_PART_TABLES)
    data/enem.duckdb.years/2022-9a4e….duckdb  … of 2022

The main file (the *core*) holds :data:`store.schema.CORE_TABLES` and the table
``store_parts`` (year, file name). A year's file is never changed once written: a writer that
changes a year writes a new file under a new name and names it in a copy of the core, and the
rename of that copy over the core is the one step that makes the new state live
(``store.connection.writing``). Readers attach the core and the year files it names, read
only, to a private in-memory database, whose views carry the tables' names: a year table's view
is the union of its rows in every year's file, so a query that spans years stays one statement.

A store whose core has no ``store_parts`` table is the older single-file layout (every table
in one file); ``store.migration`` turns it into this one.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

import duckdb
import pandas as pd

from store.schema import TABLES, VIEWS, YEAR_PART_TABLES

#: The core's table naming each year's file.
PARTS_TABLE = "store_parts"
PARTS_COLUMNS = "year INTEGER PRIMARY KEY, file VARCHAR"
#: What the core is attached as, in readers and writers.
CORE_CATALOG = "core"
#: A year's file name: the year, a dash, a unique token.
_PART_NAME = re.compile(r"^(\d{4})-[0-9a-f]+\.duckdb(\.wal)?$")


def years_folder(store_path: Path) -> Path:
    """The folder beside the core that holds the year files (``<store>.years``)."""
    store_path = Path(store_path)
    return store_path.with_name(store_path.name + ".years")


def year_catalog(year: int) -> str:
    """What a year's file is attached as."""
    return f"year_{int(year)}"


def quoted_path(path: Path) -> str:
    """A file path as an SQL string literal (ATTACH takes no parameters)."""
    return "'" + str(path).replace("'", "''") + "'"


def is_split(con: duckdb.DuckDBPyConnection, catalog: str) -> bool:
    """True when the database attached as ``catalog`` is the core of a per-year store."""
    try:  # binding a query on the table is cheaper than listing the catalogue's tables
        con.execute(f"SELECT year FROM {catalog}.main.{PARTS_TABLE} LIMIT 0")
    except duckdb.CatalogException:
        return False
    return True


def part_files(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[int, str]:
    """{year: file name} as the core attached as ``catalog`` records them."""
    rows = con.execute(f"SELECT year, file FROM {catalog}.main.{PARTS_TABLE} ORDER BY year")
    return {int(year): str(name) for year, name in rows.fetchall()}


def stored_parts(store_path: Path) -> dict[int, str] | None:
    """{year: file name} as the main file at ``store_path`` names them now; None for a store
    of one file."""
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH {quoted_path(store_path)} AS {CORE_CATALOG} (READ_ONLY)")
        return part_files(con, CORE_CATALOG) if is_split(con, CORE_CATALOG) else None


def attach_years(con: duckdb.DuckDBPyConnection, store_path: Path, parts: dict[int, str]
                 ) -> None:
    """Attach each year's file, read only, as :func:`year_catalog` of its year.

    Raises duckdb.IOException when a file is gone: a writer replaced that year after the core
    was read, and the caller reads the core again.
    """
    folder = years_folder(store_path)
    for year, name in parts.items():
        con.execute(f"ATTACH {quoted_path(folder / name)} AS {year_catalog(year)} (READ_ONLY)")


def create_views(con: duckdb.DuckDBPyConnection, years: list[int],
                 core_catalog: str | None = CORE_CATALOG) -> None:
    """Views named like the tables in the in-memory database ``memory``.

    A main-file table's view reads the main file (skipped when ``core_catalog`` is None: a
    writer reaches the main file by its search path). A year table's view is the union, by
    column name, of its rows in the attached year files (``years``) that have it; with no year
    file at all, an empty table of the schema stands in, so every name exists in an empty store.
    A year file made before a table existed simply adds no rows (and one made before a column
    existed, NULLs).
    """
    present: dict[str, set[str]] = {}
    for catalog, name in con.execute("SELECT database_name, table_name FROM duckdb_tables()"
                                     ).fetchall():
        present.setdefault(catalog, set()).add(name)
    statements = []
    if core_catalog is not None:
        # Every table of the main file (a test's or a user's own included), not the year
        # tables: their rows are the year files'.
        for name in sorted(present.get(core_catalog, set()) - {PARTS_TABLE, *YEAR_PART_TABLES}):
            statements.append(f"CREATE VIEW memory.main.{name} AS "
                              f"SELECT * FROM {core_catalog}.main.{name}")
    for name in YEAR_PART_TABLES:
        sources = [f"SELECT * FROM {year_catalog(year)}.main.{name}" for year in years
                   if name in present.get(year_catalog(year), set())]
        if not sources and years:
            continue  # no year file has it: absent, as in a single file made before it
        # The empty table of the schema comes first: it fixes the columns' order and types.
        statements.append(f"CREATE TABLE memory.main._schema_{name} ({TABLES[name]})")
        union = " UNION ALL BY NAME ".join([f"SELECT * FROM memory.main._schema_{name}", *sources])
        statements.append(f"CREATE VIEW memory.main.{name} AS {union}")
    statements += [f"CREATE VIEW memory.main.{name} AS {body}" for name, body in VIEWS.items()]
    con.execute(";\n".join(statements))  # one call: each statement alone costs a round trip


def new_part_name(year: int) -> str:
    """A file name no earlier state of the store used for ``year``."""
    return f"{int(year)}-{uuid.uuid4().hex[:12]}.duckdb"


def unreferenced_files(store_path: Path, parts: dict[int, str]) -> list[Path]:
    """Year files (and their WALs) in the folder that the live core does not name: left by a
    writer killed before its swap, or replaced by a later state. Only a writer holding the
    writers' turn may remove them (no other writer can be making one)."""
    folder = years_folder(store_path)
    if not folder.is_dir():
        return []
    kept = set(parts.values())
    return sorted(path for path in folder.iterdir()
                  if _PART_NAME.match(path.name) and path.name.removesuffix(".wal") not in kept)


def copy_store(source: Path, target: Path) -> None:
    """Copy the store at ``source`` (its main file and the year files it names) to ``target``.

    Year files are never changed once written, so they are hard-linked where the file system
    allows (a copy of a large store then costs its main file), else copied. ``source`` may be
    written meanwhile: the copy is of the main file as it was read, and of the year files it
    names (a year replaced during the copy is taken again from the newer main file).
    """
    source, target = Path(source), Path(target)
    for _ in range(50):
        shutil.copyfile(source, target)
        parts = stored_parts(target)  # the copy's: the state copied, whatever happens next
        if not parts:
            return
        folder = years_folder(target)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            for name in parts.values():
                _link_or_copy(years_folder(source) / name, folder / name)
        except FileNotFoundError:
            continue  # a writer replaced a year meanwhile: copy its newer main file
        return
    raise RuntimeError(f"{source}: its year files kept changing while it was being copied")


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except FileNotFoundError:
        raise
    except OSError:  # another file system, or links not allowed
        shutil.copyfile(source, target)


def store_files(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The files a reader ``con`` (``store.connection.open_reader``) reads: columns ``file``
    (name only), ``holds`` ("runs and metadata", "year 2023", or "every table" for a store of
    one file) and ``bytes``; the main file first, then the years in order."""
    split = is_split(con, CORE_CATALOG)
    rows = []
    for name, path in con.execute(
            "SELECT database_name, path FROM duckdb_databases() "
            "WHERE NOT internal AND path IS NOT NULL AND path <> ''").fetchall():
        if name == CORE_CATALOG:
            holds, order = ("runs and metadata" if split else "every table"), 0
        elif name.startswith("year_"):
            holds, order = f"year {name.removeprefix('year_')}", int(name.removeprefix("year_"))
        else:
            continue
        rows.append((order, Path(path).name, holds, Path(path).stat().st_size))
    rows.sort()
    return pd.DataFrame([row[1:] for row in rows], columns=["file", "holds", "bytes"])


def move_store(source: Path, target: Path) -> None:
    """Move a store that nobody else uses (one just built beside ``target``) to ``target``,
    which must not exist yet: its year folder first, its main file last, so ``target`` exists
    only once it is whole. A year folder found at ``target`` without its main file is what an
    earlier move left when it was killed, and is replaced."""
    source, target = Path(source), Path(target)
    if target.exists():
        raise FileExistsError(f"{target} exists: a store is never moved over another")
    if years_folder(source).exists():
        if years_folder(target).exists():
            shutil.rmtree(years_folder(target))
        os.replace(years_folder(source), years_folder(target))
    os.replace(source, target)


def remove_store(path: Path) -> None:
    """Delete the store at ``path`` (its main file, year folder and what writers keep beside
    it); nothing happens when there is none. For scratch stores: never a store in use."""
    path = Path(path)
    for name in ("", ".wal", ".next", ".next.wal", ".writer-lock"):
        path.with_name(path.name + name).unlink(missing_ok=True)
    shutil.rmtree(years_folder(path), ignore_errors=True)
