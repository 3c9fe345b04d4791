"""Writers build a copy and swap it in: readers never wait on them, writers take turns, and a
failed or killed write leaves the live file as it was. Real processes, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import duckdb
import pytest

from store.connection import SharedReader, open_reader, staged_path, writing

ROOT = Path(__file__).resolve().parent.parent


def _values(path: Path) -> list[int]:
    """The table's values, read by another process with a read-only connection."""
    code = ("import duckdb, json, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(json.dumps(sorted(v for (v,) in con.execute('SELECT v FROM t').fetchall())))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def _writer_process(path: Path, value: int, ready: Path, hold_seconds: float) -> subprocess.Popen:
    """Another process that writes ``value`` inside a write session and then holds it open."""
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from store.connection import writing
        with writing(Path({str(path)!r})) as con:
            con.execute("INSERT INTO t VALUES ({value})")
            Path({str(ready)!r}).touch()
            time.sleep({hold_seconds})
    """)
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.fixture
def store(tmp_path) -> Path:
    path = tmp_path / "store.duckdb"
    with writing(path) as con:
        con.execute("CREATE TABLE t (v INTEGER)")
        con.execute("INSERT INTO t VALUES (1)")
    return path


def test_readers_see_the_previous_state_until_the_write_completes(store, tmp_path):
    ready = tmp_path / "ready"
    writer = _writer_process(store, 2, ready, hold_seconds=3)
    _wait_for(ready)
    assert _values(store) == [1]  # no lock error, the state before the write
    assert writer.wait(timeout=60) == 0, writer.stderr.read()
    assert _values(store) == [1, 2]
    assert not staged_path(store).exists()


def test_a_failed_write_leaves_the_live_file_untouched(store):
    before = store.read_bytes()
    with pytest.raises(duckdb.CatalogException), writing(store) as con:
        con.execute("INSERT INTO t VALUES (99)")
        con.execute("SELECT * FROM no_such_table")
    assert store.read_bytes() == before
    assert not staged_path(store).exists()
    assert _values(store) == [1]


def test_writers_take_turns_and_the_second_says_whom_it_waits_for(store, tmp_path):
    ready = tmp_path / "ready"
    first = _writer_process(store, 2, ready, hold_seconds=2)
    _wait_for(ready)
    messages: list[str] = []
    with writing(store, on_wait=messages.append) as con:
        con.execute("INSERT INTO t VALUES (3)")
    assert first.wait(timeout=60) == 0
    assert _values(store) == [1, 2, 3]  # the second copied the first's result: nothing lost
    assert len(messages) == 1 and f"(process {first.pid})" in messages[0]
    assert messages[0].startswith("waiting for ")


def test_a_killed_writer_costs_nothing_and_the_next_one_proceeds(store, tmp_path):
    before = store.read_bytes()
    ready = tmp_path / "ready"
    writer = _writer_process(store, 7, ready, hold_seconds=60)
    _wait_for(ready)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=60)
    assert store.read_bytes() == before
    assert staged_path(store).exists()  # its half-built copy is left behind …
    with writing(store, on_wait=lambda message: None) as con:
        con.execute("INSERT INTO t VALUES (8)")
    assert _values(store) == [1, 8]  # … and thrown away by the next writer
    assert not staged_path(store).exists()


def test_a_nested_write_of_the_same_file_is_refused_not_a_deadlock(store):
    with writing(store), pytest.raises(RuntimeError, match="already writing"), writing(store):
        pass
    con = open_reader(store)
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 1
    con.close()


def _shared_values(reader: SharedReader) -> list[int]:
    with reader.cursor() as con:
        return sorted(v for (v,) in con.execute("SELECT v FROM t").fetchall())


def test_a_shared_reader_keeps_its_version_and_one_made_after_a_swap_sees_the_new_one(store):
    before = SharedReader(store)
    held = open_reader(store)  # a plain connection to the same path, open across the swap
    with writing(store) as con:
        con.execute("INSERT INTO t VALUES (2)")
    after = SharedReader(store)
    # Both readers alive in one process: DuckDB's per-path instance would have served the
    # replaced file to the second one.
    assert _shared_values(before) == [1]
    assert _shared_values(after) == [1, 2]
    assert sorted(v for (v,) in held.execute("SELECT v FROM t").fetchall()) == [1]
    held.close()
    assert sorted(v for (v,) in open_reader(store).execute("SELECT v FROM t").fetchall()) == [1, 2]


def test_a_shared_reader_serves_threads_at_once(store):
    with writing(store) as con:
        con.execute("INSERT INTO t SELECT range FROM range(2, 20001)")
    reader = SharedReader(store)
    sums, errors = [], []

    def read(offset: int) -> None:
        try:
            for _ in range(20):
                with reader.cursor() as con:
                    sums.append(con.execute("SELECT sum(v + ?) FROM t", [offset]).fetchone()[0])
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=read, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    expected = {20000 * 20001 // 2 + k * 20000 for k in range(4)}
    assert len(sums) == 80 and set(sums) == expected


def test_a_shared_reader_of_a_missing_file_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no database at"):
        SharedReader(tmp_path / "absent.duckdb")


def test_a_waiting_writer_is_told_the_command_that_holds_the_store(store, capsys):
    """``python -m cli --db X ingest-enem`` used to be named ``__main__.py --db``: the command
    line names itself by its command."""
    from cli.main import main

    assert main(["info", "--db", str(store)]) in (0, 1, 2)
    capsys.readouterr()
    with writing(store) as con:
        con.execute("INSERT INTO t VALUES (5)")
        named = store.with_name(store.name + ".writer-lock").read_text()
    assert named == f"enem-llm info (process {os.getpid()})"
