"""Where the database lives and how to open it.

The path comes from, in order: an explicit argument (the ``--db`` flag), the ``ENEM_DB``
environment variable, or ``data/enem.duckdb`` under the project root.

Readers never wait on a writer. DuckDB lets a file be open either by one writer or by readers,
so a writer never opens the live file: :func:`writing` copies it to ``<file>.next``, writes the
copy, checkpoints it and renames it over the live file in one atomic step. Until then readers
(the dashboard's :class:`SharedReader` of the file's version, a command's read-only connection)
keep seeing the previous state; a reader opened after the rename sees the new one. Readers that still hold the old file keep reading
it until they close it. Writers take turns through an advisory lock on ``<file>.writer-lock``;
one that has to wait says so and for whom. The price is a copy of the store per write and, while
writing, the disk space of a second copy.
"""

from __future__ import annotations

import fcntl
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


def open_reader(path: Path, wait_seconds: float = 30.0) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the live file (writers use :func:`writing` instead).

    Writers never hold the live file, so a lock conflict only comes from a program outside this
    project; it is retried for ``wait_seconds`` before giving up with DuckDB's error.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no database at {path}; run `enem-llm demo` or ingest a year")
    return _retry_on_lock(lambda: duckdb.connect(str(path), read_only=True), wait_seconds)


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

    CATALOGUE = "store"

    def __init__(self, path: Path, wait_seconds: float = 30.0):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(
                f"no database at {self.path}; run `enem-llm demo` or ingest a year")
        self._base = duckdb.connect(":memory:")
        quoted = str(self.path).replace("'", "''")
        _retry_on_lock(lambda: self._base.execute(
            f"ATTACH '{quoted}' AS {self.CATALOGUE} (READ_ONLY)"), wait_seconds)
        self._lock = threading.Lock()

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of this thread's own, reading the file; closed when the block ends."""
        with self._lock:  # cursors are made one at a time; each is then used by one thread
            con = self._base.cursor()
        try:
            con.execute(f"USE {self.CATALOGUE}")
            yield con
        finally:
            con.close()


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
def writing(path: Path, on_wait: Callable[[str], None] = _say_waiting
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a private copy of the database, swapped in when the block
    ends without an exception (and thrown away when it raises: the live file is untouched).

    Whatever fails, the copy is removed, a half-made one included: a copy that filled the disk
    must not keep it full for the next command. A copy found when the session starts was left
    by a writer that was killed (this one holds the writers' lock, so no live writer owns it)
    and is removed first.
    """
    path = Path(path)
    staged = staged_path(path)
    with writer_turn(path, on_wait):
        _remove_database_file(staged)  # left over by a writer that was killed
        con = None
        try:
            if path.exists():
                shutil.copyfile(path, staged)
            con = duckdb.connect(str(staged))
            ensure_schema(con)
            yield con
            con.execute("CHECKPOINT")
            con.close()
            os.replace(staged, path)
        except BaseException:
            if con is not None:
                con.close()
            _remove_database_file(staged)
            raise


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
