"""The store of per-year files (store/layout.py) under attack: writers killed at each step of a
write (copy, write, rename, clean-up), a full disk, writers that overlap and readers that open
the store while writers swap years. Real processes, real files; every state read back through
the store's own readers."""

from __future__ import annotations

import errno
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from store import layout
from store.connection import open_private_reader, open_reader, staged_path, writing

ROOT = Path(__file__).resolve().parent.parent
YEARS = (2022, 2023)
ITEMS_PER_YEAR = 100


def _build(path: Path) -> Path:
    """A store with one run and ITEMS_PER_YEAR items in each of YEARS."""
    with writing(path) as con:
        con.execute("INSERT INTO model_runs (run_id) VALUES ('r0')")
    for year in YEARS:
        with writing(path, year=year) as con:
            con.execute("INSERT INTO items (year, item_id) SELECT ?, range FROM range(?)",
                        [year, ITEMS_PER_YEAR])
    return path


@pytest.fixture
def store(tmp_path) -> Path:
    return _build(tmp_path / "store.duckdb")


def _state(path: Path) -> tuple[dict[int, int], list[str]]:
    """({year: items}, run ids) as a new reader sees them."""
    con = open_reader(path)
    try:
        items = dict(con.execute("SELECT year, count(*) FROM items GROUP BY year").fetchall())
        runs = [r for (r,) in con.execute("SELECT run_id FROM model_runs ORDER BY 1").fetchall()]
    finally:
        con.close()
    return items, runs


def _year_files(path: Path) -> set[str]:
    return {p.name for p in layout.years_folder(path).iterdir()}


def _live_parts(path: Path) -> set[str]:
    con = open_reader(path)
    try:
        return set(layout.part_files(con, layout.CORE_CATALOG).values())
    finally:
        con.close()


BEFORE = ({2022: ITEMS_PER_YEAR, 2023: ITEMS_PER_YEAR}, ["r0"])
AFTER = ({2022: ITEMS_PER_YEAR, 2023: ITEMS_PER_YEAR + 1}, ["r0", "r1"])


def _killed_writer(path: Path, patch: str) -> subprocess.CompletedProcess:
    """A process that adds an item to 2023 and the run r1 in one write, with ``patch`` (code
    run first) arranging for it to SIGKILL itself at some step."""
    code = textwrap.dedent("""
        import os, shutil, signal, sys
        from pathlib import Path
        import store.connection as connection
        def die():
            os.kill(os.getpid(), signal.SIGKILL)
    """) + textwrap.dedent(patch) + textwrap.dedent(f"""
        with connection.writing(Path({str(path)!r}), year=2023) as con:
            con.execute("INSERT INTO items (year, item_id) VALUES (2023, -1)")
            con.execute("INSERT INTO model_runs (run_id) VALUES ('r1')")
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


KILL_POINTS = {
    # Half of the main file copied, then killed.
    "copy of the main file": """
        real = shutil.copyfile
        def copyfile(source, target, *args, **kwargs):
            data = Path(source).read_bytes()
            Path(target).write_bytes(data[: len(data) // 2])
            die()
        shutil.copyfile = copyfile
    """,
    # The main file copied, half of the year's file copied, then killed.
    "copy of the year file": """
        real = shutil.copyfile
        calls = []
        def copyfile(source, target, *args, **kwargs):
            calls.append(source)
            if len(calls) == 1:
                return real(source, target, *args, **kwargs)
            data = Path(source).read_bytes()
            Path(target).write_bytes(data[: len(data) // 2])
            die()
        shutil.copyfile = copyfile
    """,
    # Everything written and checkpointed, killed just before the rename.
    "rename": """
        os.replace = lambda source, target: die()
    """,
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_writer_killed_before_its_swap_leaves_the_previous_state_and_costs_nothing(
        store, point):
    files = _year_files(store)
    killed = _killed_writer(store, KILL_POINTS[point])
    assert killed.returncode == -9, killed.stderr
    assert _state(store) == BEFORE
    # Its half-made copy of the main file, or its year file, is left behind …
    assert staged_path(store).exists() or _year_files(store) - files
    with writing(store) as con:
        con.execute("INSERT INTO model_runs (run_id) VALUES ('r2')")
    assert _year_files(store) == files  # … and removed by the next writer
    assert _state(store) == (BEFORE[0], ["r0", "r2"])
    assert not staged_path(store).exists()


def test_a_writer_killed_after_its_swap_has_written_and_its_old_year_file_goes_next(store):
    old = _live_parts(store)
    killed = _killed_writer(store, """
        real_replace = os.replace
        def replace(source, target):
            real_replace(source, target)
            die()  # before the replaced year file is removed
        os.replace = replace
    """)
    assert killed.returncode == -9, killed.stderr
    assert _state(store) == AFTER
    assert len(_year_files(store)) == 3  # 2022, the new 2023 and the replaced 2023
    with writing(store) as con:
        con.execute("INSERT INTO model_runs (run_id) VALUES ('r2')")
    assert _year_files(store) == _live_parts(store)
    assert len(old & _live_parts(store)) == 1  # 2022's file never changed


def test_a_failed_write_of_a_year_leaves_every_file_as_it_was(store):
    files = {name: (layout.years_folder(store) / name).read_bytes()
             for name in _year_files(store)}
    main = store.read_bytes()
    with pytest.raises(ZeroDivisionError), writing(store, year=2023) as con:
        con.execute("INSERT INTO items (year, item_id) VALUES (2023, -1)")
        raise ZeroDivisionError
    assert store.read_bytes() == main
    assert {name: (layout.years_folder(store) / name).read_bytes()
            for name in _year_files(store)} == files


def test_a_full_disk_while_writing_a_year_leaves_the_store_and_the_disk_as_they_were(
        tmp_path, small_disk):
    built = _build(tmp_path / "built.duckdb")
    with writing(built, year=2023) as con:  # a year file of some size
        con.execute("INSERT INTO items (year, item_id, problem) SELECT 2023, range, "
                    "md5(range::VARCHAR) || md5((range + 1)::VARCHAR) FROM range(300000)")
    main = built.stat().st_size
    year_bytes = sum(p.stat().st_size for p in layout.years_folder(built).iterdir())
    # Room for the store, a copy of its main file, and half of a copy of its largest year.
    disk = small_disk(-(-(main * 2 + year_bytes + year_bytes // 3) // 4096) * 4096 + 65536)
    store = disk / "store.duckdb"
    layout.copy_store(built, store)
    before, free = _state(store), shutil.disk_usage(disk).free
    with pytest.raises(OSError) as raised, writing(store, year=2023) as con:
        con.execute("INSERT INTO items (year, item_id) VALUES (2023, -1)")
    assert raised.value.errno == errno.ENOSPC
    assert _state(store) == before
    assert not staged_path(store).exists()
    assert _year_files(store) == _live_parts(store)
    assert shutil.disk_usage(disk).free == free  # the partial copies' space is given back


def test_a_write_of_runs_leaves_the_year_files_alone(store):
    """What a publish costs: the main file; the year files are the very same files."""
    files = {name: (layout.years_folder(store) / name).stat().st_ino
             for name in _year_files(store)}
    with writing(store) as con:
        con.execute("INSERT INTO model_runs (run_id) VALUES ('r1')")
    assert {name: (layout.years_folder(store) / name).stat().st_ino
            for name in _year_files(store)} == files
    assert _state(store) == (BEFORE[0], ["r0", "r1"])


def test_a_year_table_is_written_only_in_a_write_that_names_its_year(store):
    with pytest.raises(Exception, match="not an? table"), writing(store) as con:
        con.execute("INSERT INTO items (year, item_id) VALUES (2023, -1)")
    assert _state(store) == BEFORE


def test_writers_of_different_years_and_of_runs_take_turns_and_lose_nothing(store):
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from store.connection import writing
        path, kind, k = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        for i in range(5):
            if kind == "run":
                with writing(path, on_wait=lambda m: None) as con:
                    con.execute("INSERT INTO model_runs (run_id) VALUES (?)", [f"w{k}-{i}"])
            else:
                with writing(path, year=int(kind), on_wait=lambda m: None) as con:
                    con.execute("INSERT INTO items (year, item_id) VALUES (?, ?)",
                                [int(kind), 1000 * k + i])
    """)
    kinds = ["run", "2022", "2023", "2024"]
    writers = [subprocess.Popen([sys.executable, "-c", script, str(store), kind, str(k)],
                                cwd=ROOT, stderr=subprocess.PIPE, text=True)
               for k, kind in enumerate(kinds)]
    for writer in writers:
        assert writer.wait(timeout=300) == 0, writer.stderr.read()
    items, runs = _state(store)
    assert items == {2022: ITEMS_PER_YEAR + 5, 2023: ITEMS_PER_YEAR + 5, 2024: 5}
    assert runs == sorted(["r0"] + [f"w0-{i}" for i in range(5)])
    assert _year_files(store) == _live_parts(store)  # replaced year files all removed


def test_readers_opening_the_store_while_writers_swap_years_see_whole_states(store):
    """Each reader sees 2022 and 2023 with as many items as some state had: never a year
    missing, never a file error, whatever the moment it opened."""
    stop, seen, errors = threading.Event(), [], []

    def read() -> None:
        while not stop.is_set():
            try:
                items, _ = _state(store)
                seen.append(items)
            except Exception as error:  # noqa: BLE001 - reported by the assertion below
                errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for i in range(12):
            year = YEARS[i % 2]
            with writing(store, year=year, on_wait=lambda m: None) as con:
                con.execute("INSERT INTO items (year, item_id) VALUES (?, ?)", [year, -i - 1])
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert not errors, errors[:3]
    assert len(seen) > 12
    for items in seen:
        assert set(items) == set(YEARS)
        assert all(ITEMS_PER_YEAR <= n <= ITEMS_PER_YEAR + 6 for n in items.values())
    assert _state(store)[0] == {2022: ITEMS_PER_YEAR + 6, 2023: ITEMS_PER_YEAR + 6}


def test_a_year_file_removed_by_hand_is_named_not_waited_for(store):
    name = min(_live_parts(store))
    (layout.years_folder(store) / name).unlink()
    with pytest.raises(FileNotFoundError, match=f"names the year file {name}"):
        open_private_reader(store)  # a reader that opens the files now


def test_a_built_store_moves_into_place_whole_and_replaces_a_killed_moves_leftovers(store,
                                                                                  tmp_path):
    target = tmp_path / "moved" / "enem.duckdb"
    target.parent.mkdir()
    layout.years_folder(target).mkdir()  # a year folder without its main file: a killed move
    (layout.years_folder(target) / "2023-0123456789ab.duckdb").write_bytes(b"stale")
    layout.move_store(store, target)
    assert not store.exists() and not layout.years_folder(store).exists()
    assert _state(target) == BEFORE
    assert _year_files(target) == _live_parts(target)
    with pytest.raises(FileExistsError):
        layout.move_store(target, target)


def test_removing_a_scratch_store_takes_its_year_files_with_it(store):
    layout.remove_store(store)
    assert not store.exists() and not layout.years_folder(store).exists()
    assert list(store.parent.iterdir()) == []
    layout.remove_store(store)  # none there: nothing happens
