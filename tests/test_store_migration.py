"""``enem-llm migrate``: a single-file store (the layout before per-year files) becomes a main
file plus one file per year with every row kept; it keeps working until then; a migration that
cannot fit on the disk, or is killed, changes nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from cli.main import main
from store import layout
from store.connection import is_per_year_store, open_reader, writing
from store.migration import (
    DISK_HEADROOM,
    StoreMigrationError,
    migrate_store,
    write_single_file,
)
from store.schema import TABLES, YEAR_PART_TABLES
from tests.page_support import assert_clean, messages, run_page

ROOT = Path(__file__).resolve().parent.parent


def _tables(path: Path) -> dict[str, pd.DataFrame]:
    """Every table's rows, sorted, as a reader of ``path`` sees them."""
    con = open_reader(path)
    try:
        return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").df()
                for name in TABLES if name != "meta"}
    finally:
        con.close()


@pytest.fixture(scope="module")
def flat_demo(tmp_path_factory, pages_demo_db) -> Path:
    return write_single_file(pages_demo_db, tmp_path_factory.mktemp("flat") / "flat.duckdb")


def _assert_same_rows(path: Path, reference: Path) -> None:
    got, expected = _tables(path), _tables(reference)
    for name, rows in expected.items():
        pd.testing.assert_frame_equal(got[name], rows, check_dtype=False, obj=name)


def test_a_single_file_store_is_read_and_written_as_before(tmp_path, flat_demo, pages_demo_db):
    path = tmp_path / "flat.duckdb"
    path.write_bytes(flat_demo.read_bytes())
    assert not is_per_year_store(path)
    _assert_same_rows(path, pages_demo_db)
    again = write_single_file(path, tmp_path / "again.duckdb")  # a single file, written anew
    assert not is_per_year_store(again)
    _assert_same_rows(again, pages_demo_db)
    with writing(path) as con:
        con.execute("INSERT INTO model_runs (run_id) VALUES ('added')")
    assert not layout.years_folder(path).exists()  # still one file
    con = open_reader(path)
    assert con.execute("SELECT count(*) FROM model_runs WHERE run_id = 'added'").fetchone()[0]
    con.close()


def test_migrate_keeps_every_row_and_writes_a_file_per_year(tmp_path, flat_demo, pages_demo_db,
                                                              capsys):
    path = tmp_path / "flat.duckdb"
    path.write_bytes(flat_demo.read_bytes())
    assert main(["migrate", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2023 (" in out and "per-year files" in out
    assert is_per_year_store(path)
    assert [p.name[:4] for p in layout.years_folder(path).iterdir()] == ["2023"]
    _assert_same_rows(path, pages_demo_db)
    _assert_same_rows(path, flat_demo)
    assert main(["migrate", "--db", str(path)]) == 1  # twice: refused, nothing changed
    assert "already a store of per-year files" in capsys.readouterr().err


def test_migrate_of_the_real_item_files_keeps_every_year(tmp_path, real_items_db):
    flat = write_single_file(real_items_db, tmp_path / "flat.duckdb")
    summary = migrate_store(flat)
    assert sorted(summary.years) == [2019, 2020, 2021, 2022]
    _assert_same_rows(flat, real_items_db)
    con = open_reader(real_items_db)
    union = " UNION ALL ".join(f"SELECT year FROM {name}" for name in YEAR_PART_TABLES)
    rows = dict(con.execute(f"SELECT year, count(*) FROM ({union}) GROUP BY year").fetchall())
    con.close()
    assert summary.years == rows  # every year table's rows of each year, counted by year


def test_migrate_refuses_when_the_disk_cannot_hold_the_new_files(tmp_path, flat_demo,
                                                                  small_disk, capsys):
    size = flat_demo.stat().st_size
    disk = small_disk(-(-int(size * (1 + DISK_HEADROOM / 2)) // 4096) * 4096)
    path = disk / "flat.duckdb"
    path.write_bytes(flat_demo.read_bytes())
    before = path.read_bytes()
    with pytest.raises(StoreMigrationError, match="GB free"):
        migrate_store(path)
    assert main(["migrate", "--db", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: migrating flat.duckdb needs about") and err.count("\n") == 1
    assert path.read_bytes() == before
    assert sorted(p.name for p in disk.iterdir()) == ["flat.duckdb", "flat.duckdb.writer-lock"]


def test_a_killed_migration_leaves_the_single_file_and_the_next_one_finishes(tmp_path,
                                                                              flat_demo):
    path = tmp_path / "flat.duckdb"
    path.write_bytes(flat_demo.read_bytes())
    before = path.read_bytes()
    code = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from store.migration import migrate_store
        os.replace = lambda source, target: os.kill(os.getpid(), signal.SIGKILL)
        migrate_store(Path({str(path)!r}))
    """)
    killed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, check=False)
    assert killed.returncode == -9, killed.stderr
    assert path.read_bytes() == before
    assert list(layout.years_folder(path).iterdir())  # its year file is left …
    _assert_same_rows(path, flat_demo)  # … and the store is still the single file
    migrate_store(path)
    assert len(list(layout.years_folder(path).iterdir())) == 1  # … and replaced
    _assert_same_rows(path, flat_demo)


def test_the_data_page_lists_the_store_files_and_offers_migrate_for_a_single_file(
        monkeypatch, tmp_path, flat_demo, pages_demo_db):
    for path, migrated in ((flat_demo, False), (pages_demo_db, True)):
        monkeypatch.setenv("ENEM_DB", str(path))
        app = run_page("pages/Data.py")
        assert_clean(app)
        files = next(frame.value for frame in app.dataframe if "holds" in frame.value.columns)
        assert files["file"].iloc[0] == path.name
        if migrated:
            assert list(files["holds"]) == ["runs and metadata", "year 2023"]
            assert "enem-llm migrate" not in messages(app)
        else:
            assert list(files["holds"]) == ["every table"]
            assert "enem-llm migrate" in messages(app)
        assert files["MB"].iloc[0] == pytest.approx(path.stat().st_size / 1e6)
