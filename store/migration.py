"""Turning a single-file store into a store of per-year files (``enem-llm migrate``).

The migration is one write: it holds the writers' turn, builds the new main file beside the live
one (``<file>.next``) and a file per year in ``<file>.years/``, and renames the new main file
over the old one. Until that rename the store is the single file, unchanged; a migration that
fails or is killed leaves it so, and what it had made is removed (by itself, or by the next
writer). Readers keep reading the single file they opened.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from store import layout
from store.connection import one_row, open_private_reader, staged_path, writer_turn
from store.schema import CORE_TABLES, TABLES, YEAR_PART_TABLES, ensure_schema

#: Free disk a migration asks for, as a share of the single file's size: the new files hold
#: the same rows, compressed alike, and DuckDB's blocks are not always full.
DISK_HEADROOM = 1.25
#: Bounded memory: a full-size year's examinees are copied in one statement.
MEMORY_LIMIT = "1GB"


class StoreMigrationError(RuntimeError):
    """The store cannot be migrated (not enough disk, already migrated); nothing was changed."""


@dataclass
class MigrationSummary:
    """What a migration wrote: {year: rows of its year tables}, the main file's rows, sizes."""

    years: dict[int, int] = field(default_factory=dict)
    core_rows: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    def lines(self) -> list[str]:
        years = ", ".join(f"{year} ({rows:,} rows)" for year, rows in self.years.items())
        return [f"year files: {years or 'none'}",
                f"main file: {self.core_rows:,} rows of runs and metadata",
                (f"size: {self.bytes_before / 1e6:,.1f} MB in one file → "
                 f"{self.bytes_after / 1e6:,.1f} MB in {len(self.years) + 1} files")]


def store_bytes(path: Path) -> int:
    """The disk a store takes: its main file and the year files it names."""
    path = Path(path)
    folder = layout.years_folder(path)
    return path.stat().st_size + sum((folder / name).stat().st_size
                                     for name in (layout.stored_parts(path) or {}).values())


def needed_bytes(path: Path) -> int:
    """Free disk the migration of the single file at ``path`` asks for."""
    return int(Path(path).stat().st_size * DISK_HEADROOM)


def migrate_store(path: Path, on_year: Callable[[int], None] = lambda year: None,
                  on_wait: Callable[[str], None] | None = None) -> MigrationSummary:
    """Rewrite the single-file store at ``path`` as a main file plus one file per year.

    ``on_year(year)`` is called as each year starts. Raises StoreMigrationError, changing
    nothing, when the store is already of per-year files or the disk cannot hold the new files
    beside the old one.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no database at {path}")
    staged = staged_path(path)
    turn = writer_turn(path) if on_wait is None else writer_turn(path, on_wait)
    with turn:
        con = duckdb.connect(":memory:")
        made: list[Path] = []
        try:
            con.execute(f"ATTACH {layout.quoted_path(path)} AS old (READ_ONLY)")
            if layout.is_split(con, "old"):
                raise StoreMigrationError(f"{path} is already a store of per-year files")
            _check_disk(path)
            for leftover in [staged, *layout.unreferenced_files(path, {})]:
                leftover.unlink(missing_ok=True)  # a killed migration's or writer's
            summary = MigrationSummary(bytes_before=path.stat().st_size)
            _configure(con, path)
            con.execute(f"ATTACH {layout.quoted_path(staged)} AS {layout.CORE_CATALOG}")
            made.append(staged)
            summary.core_rows = _copy_core(con)
            for year in _years(con):
                on_year(year)
                part = layout.years_folder(path) / layout.new_part_name(year)
                part.parent.mkdir(parents=True, exist_ok=True)
                made.append(part)
                summary.years[year] = _copy_year(con, year, part)
            con.execute(f"CHECKPOINT {layout.CORE_CATALOG}")
            con.close()
            os.replace(staged, path)
        except BaseException:
            con.close()
            for leftover in made:
                for name in (leftover, leftover.with_name(leftover.name + ".wal")):
                    name.unlink(missing_ok=True)
            raise
    summary.bytes_after = store_bytes(path)
    return summary


def _check_disk(path: Path) -> None:
    need, free = needed_bytes(path), shutil.disk_usage(path.parent).free
    if free < need:
        raise StoreMigrationError(
            f"migrating {path.name} needs about {need / 1e9:,.2f} GB free in {path.parent} "
            f"(the new files are written beside the old one, which is removed at the end); "
            f"{free / 1e9:,.2f} GB are free. Nothing was changed.")


def _configure(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    spill = path.with_name(path.name + ".tmp")
    con.execute(f"SET temp_directory = {layout.quoted_path(spill)}")
    con.execute("SET enable_progress_bar = false")


def _old_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'old'").fetchall()}


def _copy_core(con: duckdb.DuckDBPyConnection) -> int:
    """Copy every table but the year tables into the new main file; returns its rows."""
    core = layout.CORE_CATALOG
    con.execute(f"USE {core}")
    ensure_schema(con, CORE_TABLES, views=False)
    con.execute(f"CREATE TABLE {layout.PARTS_TABLE} ({layout.PARTS_COLUMNS})")
    rows = 0
    for name in sorted(_old_tables(con) - set(YEAR_PART_TABLES)):
        if name in CORE_TABLES:
            if name == "meta":  # the new file's schema version stays; the rest carries over
                con.execute("INSERT OR REPLACE INTO core.main.meta SELECT * FROM old.main.meta "
                            "WHERE key <> 'schema_version'")
            else:
                con.execute(f"INSERT INTO {core}.main.{name} BY NAME "
                            f"SELECT * FROM old.main.{name}")
        else:  # a table of the user's own: kept as it is
            con.execute(f"CREATE TABLE {core}.main.{name} AS SELECT * FROM old.main.{name}")
        rows += one_row(con.execute(f"SELECT count(*) FROM {core}.main.{name}"))[0]
    ensure_schema(con, CORE_TABLES, views=False)  # brings copied rows of older files up to date
    return rows


def _years(con: duckdb.DuckDBPyConnection) -> list[int]:
    present = _old_tables(con) & set(YEAR_PART_TABLES)
    union = " UNION ".join(f"SELECT DISTINCT year FROM old.main.{name}" for name in sorted(present))
    if not union:
        return []
    return [int(year) for (year,) in con.execute(
        f"SELECT year FROM ({union}) WHERE year IS NOT NULL ORDER BY year").fetchall()]


def _copy_year(con: duckdb.DuckDBPyConnection, year: int, part: Path) -> int:
    """Copy ``year``'s rows of every year table into the new file ``part``; returns the rows."""
    catalogue = layout.year_catalog(year)
    con.execute(f"ATTACH {layout.quoted_path(part)} AS {catalogue}")
    con.execute(f"USE {catalogue}")
    ensure_schema(con, YEAR_PART_TABLES)
    rows = 0
    for name in sorted(_old_tables(con) & set(YEAR_PART_TABLES)):
        rows += one_row(con.execute(f"INSERT INTO {catalogue}.main.{name} BY NAME "
                                    f"SELECT * FROM old.main.{name} WHERE year = ?", [year]))[0]
    con.execute(f"USE {layout.CORE_CATALOG}")
    con.execute(f"CHECKPOINT {catalogue}")
    con.execute(f"DETACH {catalogue}")
    con.execute(f"INSERT INTO {layout.CORE_CATALOG}.main.{layout.PARTS_TABLE} VALUES (?, ?)",
                [year, part.name])
    return rows


def write_single_file(source: Path, target: Path) -> Path:
    """Write the store at ``source`` (either layout) as one new file ``target``, every table in
    it: the layout before per-year files, for handing a store over as one file or measuring
    the older layout against the newer (``bench.store_writes``). ``target`` must not exist."""
    source, target = Path(source), Path(target)
    if target.exists():
        raise FileExistsError(f"{target} exists; choose a new file")
    con = open_private_reader(source)
    try:
        # A reader of per-year files names the tables in its own database (views); a reader
        # of a single file, in the attached file.
        source_catalog = ("memory" if layout.is_split(con, layout.CORE_CATALOG)
                          else layout.CORE_CATALOG)
        present = {row[0] for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?",
            [source_catalog]).fetchall()}
        _configure(con, target)
        con.execute(f"ATTACH {layout.quoted_path(target)} AS single")
        con.execute("USE single")
        ensure_schema(con)
        for name in (name for name in TABLES if name in present):
            if name == "meta":  # the schema version is the new file's own
                con.execute("INSERT OR REPLACE INTO single.main.meta SELECT * FROM "
                            f"{source_catalog}.main.meta WHERE key <> 'schema_version'")
            else:
                con.execute(f"INSERT INTO single.main.{name} BY NAME "
                            f"SELECT * FROM {source_catalog}.main.{name}")
        con.execute("CHECKPOINT single")
    except BaseException:
        con.close()
        for leftover in (target, target.with_name(target.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    con.close()
    return target
