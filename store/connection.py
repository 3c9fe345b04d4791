"""Where the database lives and how to open it.

The path comes from, in order: an explicit argument (the ``--db`` flag), the ``ENEM_DB``
environment variable, or ``data/enem.duckdb`` under the project root.

A store is either one DuckDB file, or (what new stores are) a main file for runs and
metadata with one file per ENEM year beside it (``store.layout``). Either way:

- Readers never wait on a writer. DuckDB lets a file be open either by one writer or by
  readers, so a writer never opens a live file for writing: :func:`writing` copies the main
  file to ``<file>.next`` and writes the copy; a write that changes a year writes a new file for
  that year (a copy of its current one, or an empty one when the year is replaced whole); the
  rename of the copy over the main file is the one atomic step that makes the new state live.
  Readers (the dashboard's :class:`SharedReader`, a command's :func:`open_reader`) keep the
  state they opened; one opened after the rename sees the new one.
- A write that fails or is killed leaves the previous state as it was; what it had made is
  removed by itself, or by the next writer.
- Writers take turns through an advisory lock on ``<file>.writer-lock``; one that has to wait
  says so and for whom.

The price of a write is a copy of the files it changes: in a store of per-year files, the main
file (runs and metadata) plus the year it writes; in a single file, the whole store.
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from store import layout
from store.schema import CORE_TABLES, YEAR_PART_TABLES, ensure_schema

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


def open_reader(path: Path, wait_seconds: float = 30.0) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the store as it is now (writers use :func:`writing`); close it
    when done.

    Opening a store of per-year files attaches every year file and builds the views (tens of
    ms), so a process keeps the opened state of its recent stores (:class:`SharedReader`, one
    per version of the main file: a writer's swap gives the main file a new inode) and hands
    out connections of its own to it. Do not ATTACH, USE or SET on it: they would reach every
    connection of the state (:func:`open_private_reader` gives one of its own).

    Writers never hold a live file, so a lock conflict only comes from a program outside this
    project; it is retried for ``wait_seconds`` before giving up with DuckDB's error.
    """
    return recent_reader(path, wait_seconds).connection()


def open_private_reader(path: Path, wait_seconds: float = 30.0) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the store as it is now, on a database of its own (for a reader
    that attaches other files or changes settings); closing it closes the state."""
    path = _existing(path)
    con = duckdb.connect(":memory:")
    try:
        catalogue = _retry_on_lock(lambda: _attach_state(con, path), wait_seconds)
        if catalogue:
            con.execute(f"USE {catalogue}")
    except BaseException:
        con.close()
        raise
    return con


#: The opened states of the stores this process read last: {path: (version, reader)}.
_RECENT: dict[str, tuple[tuple[int, int, int], SharedReader]] = {}
_RECENT_LOCK = threading.Lock()
#: How many stores' states a process keeps open (a test session reads hundreds of stores).
_RECENT_STORES = 4


def forget_recent_readers() -> None:
    """Drop the process's kept states (:func:`open_reader`), so their files are closed once the
    connections still open on them are closed (before unmounting a disk, say)."""
    with _RECENT_LOCK:
        _RECENT.clear()
    gc.collect()  # a state is closed when its last reference goes


def recent_reader(path: Path, wait_seconds: float = 30.0) -> SharedReader:
    """The process's reader of the current version of the store at ``path`` (opened when it
    has none): what :func:`open_reader` hands connections out of."""
    path = _existing(path)
    stat = path.stat()
    version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    key = str(path.resolve())
    with _RECENT_LOCK:
        found = _RECENT.pop(key, None)
        if found is not None and found[0] == version:
            _RECENT[key] = found  # most recent last
            return found[1]
    # Readers of a replaced version are dropped here; connections still open on one keep it
    # alive until they are closed.
    reader = SharedReader(path, wait_seconds)
    with _RECENT_LOCK:
        _RECENT[key] = (version, reader)
        while len(_RECENT) > _RECENT_STORES:
            _RECENT.pop(next(iter(_RECENT)))
    return reader


def _existing(path: Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no database at {path}; run `enem-llm demo` or ingest a year")
    return path


#: How many times a reader re-reads the main file when a year file it names was just replaced.
_SNAPSHOT_TRIES = 50


def _attach_state(con: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """Attach the store at ``path`` read-only to the in-memory ``con``: the single file as
    ``core`` (returns ``"core"``: use it), or the main file and its year files with views named
    like the tables (returns None: the views are in ``con``'s own database).

    A writer may swap in a new state, and remove a year file the old main file named, between
    reading the main file and attaching that year; the reader then starts again from the new
    main file.
    """
    missing: set[str] = set()
    for _ in range(_SNAPSHOT_TRIES):
        _detach_all(con)  # what a try that met a lock or a replaced year had attached
        con.execute(f"ATTACH {layout.quoted_path(path)} AS {layout.CORE_CATALOG} (READ_ONLY)")
        if not layout.is_split(con, layout.CORE_CATALOG):
            return layout.CORE_CATALOG
        parts = layout.part_files(con, layout.CORE_CATALOG)
        if missing & set(parts.values()):
            # The main file read again still names a file that is gone: no writer replaced
            # it, it was removed by hand.
            raise FileNotFoundError(
                f"{path} names the year file {min(missing)}, which is not in "
                f"{layout.years_folder(path)}; restore it, or ingest that year again")
        try:
            layout.attach_years(con, path, parts)
        except duckdb.IOException:
            missing = {name for name in parts.values()
                       if not (layout.years_folder(path) / name).exists()}
            if not missing:
                raise
            time.sleep(0.05)
            continue
        layout.create_views(con, list(parts))
        return None
    raise RuntimeError(f"{path}: its year files kept changing while it was being opened")


def _detach_all(con: duckdb.DuckDBPyConnection) -> None:
    for (name,) in con.execute("SELECT database_name FROM duckdb_databases() "
                               "WHERE NOT internal AND database_name <> 'memory'").fetchall():
        con.execute(f"DETACH {name}")


@contextmanager
def connected(path: Path, read_only: bool = False):
    """A connection to the database that is always closed: read-only on the live file, or
    (``read_only=False``) a :func:`writing` session whose changes appear all at once."""
    if not read_only:
        with writing(path) as con:
            yield con
        return
    con = open_reader(path)
    try:
        yield con
    finally:
        con.close()



class SharedReader:
    """One read-only view of the database file as it is now, shared by threads.

    Opening the file costs about as much as a small query (DuckDB reads its catalogue), so a
    dashboard that opens it per query spends most of a page's cold time opening files. This
    opens it once and hands out cursors (a connection per use, cheap). The file is attached to
    a private in-memory database rather than opened with ``duckdb.connect(path)``: DuckDB keeps
    one instance per path in a process, and that instance would keep serving the replaced file
    after a writer's swap. A reader made after the swap sees the new file; this one keeps the
    old one open (its disk space is freed when the reader is dropped).
    """

    def __init__(self, path: Path, wait_seconds: float = 30.0):
        self.path = _existing(path)
        self._base = duckdb.connect(":memory:")
        self._catalogue = _retry_on_lock(lambda: _attach_state(self._base, self.path),
                                         wait_seconds)
        self._lock = threading.Lock()

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of this thread's own, reading the file; closed when the block ends."""
        con = self.connection()
        try:
            yield con
        finally:
            con.close()

    def connection(self) -> duckdb.DuckDBPyConnection:
        """A connection of its own to this state (the caller closes it)."""
        with self._lock:  # cursors are made one at a time; each is then used by one thread
            con = self._base.cursor()
        if self._catalogue:
            con.execute(f"USE {self._catalogue}")
        return con


def _retry_on_lock(action: Callable[[], object], wait_seconds: float):
    """``action()``, retried for ``wait_seconds`` while a program outside this project holds a
    conflicting lock on the file (writers here never hold the live file)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return action()
        except duckdb.IOException as error:
            if "lock" not in str(error).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.2)

#: Databases this process is writing (a second, nested write of one of them is refused).
_TURNS_HELD: set[str] = set()
#: How this process names itself to writers that wait for it (``set_writer_name``).
_WRITER_NAME: list[str] = []


def set_writer_name(name: str) -> None:
    """Name this process to the writers that wait for it, e.g. ``enem-llm ingest-enem`` (the
    default is the interpreter's first two arguments, which for ``python -m cli --db …`` says
    nothing useful)."""
    _WRITER_NAME[:] = [name]


def _say_waiting(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def staged_path(path: Path) -> Path:
    """Where a writer builds the next state of ``path``."""
    return path.with_name(path.name + ".next")


@contextmanager
def writer_turn(path: Path, on_wait: Callable[[str], None] = _say_waiting,
                holder: str | None = None) -> Iterator[None]:
    """Hold the writers' lock of ``path`` (waiting for it when another writer has it).

    ``on_wait`` gets one sentence naming the writer being waited for; ``holder`` is how this
    writer is named to the others (default: its command line and process id).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = str(path.resolve())
    if key in _TURNS_HELD:
        # flock would make this process wait for itself forever.
        raise RuntimeError(f"this process is already writing {path}; finish that write first")
    _TURNS_HELD.add(key)
    try:
        with _locked(path, on_wait, holder):
            yield
    finally:
        _TURNS_HELD.discard(key)


@contextmanager
def _locked(path: Path, on_wait: Callable[[str], None], holder: str | None) -> Iterator[None]:
    with open(path.with_name(path.name + ".writer-lock"), "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            other = lock.read().strip() or "another writer"
            on_wait(f"waiting for {other} to finish writing {path.name} …")
            fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        lock.truncate()
        name = _WRITER_NAME[0] if _WRITER_NAME else " ".join(Path(a).name
                                                             for a in sys.argv[:2])
        lock.write(holder or f"{name} (process {os.getpid()})")
        lock.flush()
        try:
            yield
        finally:
            lock.seek(0)
            lock.truncate()
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def writing(path: Path, on_wait: Callable[[str], None] = _say_waiting, year: int | None = None,
            replace_year: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a private copy of the store, swapped in when the block ends
    without an exception (and thrown away when it raises: the live store is untouched).

    In a store of per-year files (every new store), the connection writes the copy of the main
    file: runs and metadata. ``year``: it also writes that year's tables, in a new file for the
    year (a copy of its current one, or an empty one with ``replace_year``); unqualified names
    find the year's tables first, then the main file's, then the other years' (read-only
    views). Year tables of a year not named here cannot be written. In a single-file store the
    connection writes a copy of the whole file, and ``year`` changes nothing.

    Whatever fails, the copies are removed, half-made ones included: a copy that filled the
    disk must not keep it full for the next command. Copies found when the session starts were
    left by a writer that was killed (this one holds the writers' lock, so no live writer owns
    them) and are removed first.
    """
    path = Path(path)
    staged = staged_path(path)
    with writer_turn(path, on_wait):
        _remove_database_file(staged)  # left over by a writer that was killed
        if path.exists() and not is_per_year_store(path):
            with _writing_single_file(path, staged) as con:
                yield con
        else:
            with _writing_split(path, staged, year, replace_year) as con:
                yield con


def is_per_year_store(path: Path) -> bool:
    """True when the store at ``path`` is a main file plus per-year files (False: one file)."""
    return layout.stored_parts(path) is not None


class _Swap:
    """What a write session made: its connection, and its files other than the main file's
    copy (removed with the copy when the session fails)."""

    def __init__(self) -> None:
        self.con: duckdb.DuckDBPyConnection | None = None
        self.made: list[Path] = []


@contextmanager
def _swapped_in(path: Path, staged: Path) -> Iterator[_Swap]:
    """Rename ``staged`` over ``path`` when the block ends without an exception, closing the
    session's connection first; when it raises, close it and remove ``staged`` and the files
    the session made."""
    swap = _Swap()
    try:
        yield swap
        if swap.con is not None:
            swap.con.close()
        os.replace(staged, path)
    except BaseException:
        if swap.con is not None:
            swap.con.close()
        for made in (staged, *swap.made):
            _remove_database_file(made)
        raise


@contextmanager
def _writing_single_file(path: Path, staged: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    for leftover in layout.unreferenced_files(path, {}):
        leftover.unlink(missing_ok=True)  # year files of a migration that was killed
    with _swapped_in(path, staged) as swap:
        shutil.copyfile(path, staged)
        swap.con = con = duckdb.connect(str(staged))
        ensure_schema(con)
        yield con
        con.execute("CHECKPOINT")


@contextmanager
def _writing_split(path: Path, staged: Path, year: int | None, replace_year: bool
                   ) -> Iterator[duckdb.DuckDBPyConnection]:
    core = layout.CORE_CATALOG
    with _swapped_in(path, staged) as swap:
        if path.exists():
            shutil.copyfile(path, staged)
        swap.con = con = duckdb.connect(":memory:")
        # An in-memory database would spill to ./.tmp; keep large sorts beside the store.
        spill = path.with_name(path.name + ".tmp")
        con.execute(f"SET temp_directory = {layout.quoted_path(spill)}")
        con.execute(f"ATTACH {layout.quoted_path(staged)} AS {core}")
        con.execute(f"USE {core}")
        ensure_schema(con, CORE_TABLES, views=False)
        con.execute(f"CREATE TABLE IF NOT EXISTS {layout.PARTS_TABLE} ({layout.PARTS_COLUMNS})")
        parts = layout.part_files(con, core)
        for leftover in layout.unreferenced_files(path, parts):
            leftover.unlink(missing_ok=True)  # a killed writer's year file, or a replaced one
        others = {y: name for y, name in parts.items() if y != year}
        layout.attach_years(con, path, others)
        search = [f"{core}.main", "memory.main"]
        if year is not None:
            new_part = layout.years_folder(path) / layout.new_part_name(year)
            new_part.parent.mkdir(parents=True, exist_ok=True)
            swap.made.append(new_part)
            if year in parts and not replace_year:
                shutil.copyfile(layout.years_folder(path) / parts[year], new_part)
            catalogue = layout.year_catalog(year)
            con.execute(f"ATTACH {layout.quoted_path(new_part)} AS {catalogue}")
            con.execute(f"USE {catalogue}")
            ensure_schema(con, YEAR_PART_TABLES)
            con.execute(f"USE {core}")
            search.insert(0, f"{catalogue}.main")
        layout.create_views(con, list(others), core_catalog=None)
        con.execute(f"SET search_path = '{','.join(search)}'")
        yield con
        if year is not None:
            con.execute(f"INSERT OR REPLACE INTO {core}.main.{layout.PARTS_TABLE} VALUES (?, ?)",
                        [year, new_part.name])
            con.execute(f"CHECKPOINT {layout.year_catalog(year)}")
        con.execute(f"CHECKPOINT {core}")
    if year is not None and year in parts:
        # Readers that hold the replaced file keep reading it; new readers never name it.
        _remove_database_file(layout.years_folder(path) / parts[year])


def _remove_database_file(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows) -> None:
    """Append a pandas DataFrame or Arrow table to ``table``, matching columns by name.

    Table columns the rows do not carry are left NULL; a column the table lacks is an error.

    DuckDB finds ``_incoming_rows`` among this function's locals (a replacement scan); the
    private name can never be mistaken for a table.
    """
    _incoming_rows = rows
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming_rows").fetchall()


def one_row(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """The row of an executed statement that returns exactly one by construction: an aggregate
    without GROUP BY (``count(*)``, ``max``), an INSERT or DELETE (its row count) or a
    ``current_setting`` select.

    ``fetchone`` is typed as possibly None; for these statements it never is, and the assert
    states that invariant instead of leaving each caller to index a possible None.
    """
    row = result.fetchone()
    assert row is not None, "the statement returns one row by construction"
    return row
