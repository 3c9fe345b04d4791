"""The README's `make run` path: with no database, the operator's home page builds the demo
first; a viewer's builds nothing and reads no path of the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from store.connection import open_reader
from store.layout import copy_store

ROOT = Path(__file__).resolve().parent.parent


def test_a_viewer_on_a_store_less_server_builds_nothing_and_sees_no_path(monkeypatch, tmp_path):
    db = tmp_path / "data" / "enem.duckdb"
    monkeypatch.setenv("ENEM_DB", str(db))
    monkeypatch.chdir(ROOT)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not app.exception
    assert not db.exists() and not db.parent.exists()
    shown = "\n".join(element.value for element in [*app.info, *app.warning, *app.markdown])
    assert "operator builds it" in shown
    assert str(tmp_path) not in shown and "enem.duckdb" not in shown
    assert not any("synthetic demo" in info.value for info in app.info)


def test_home_page_builds_the_demo_database_on_first_start(monkeypatch, tmp_path, as_operator):
    db = tmp_path / "data" / "enem.duckdb"
    monkeypatch.setenv("ENEM_DB", str(db))
    monkeypatch.chdir(ROOT)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not app.exception
    assert db.exists() and not db.with_name(db.name + ".building").exists()
    assert any("synthetic demo" in info.value for info in app.info)
    # The sidebar the first visitor sees is the whole one, the presentation switch included.
    assert "Present these figures" in [button.label for button in app.sidebar.button]
    con = open_reader(db)
    try:
        candidates = con.execute("SELECT count(*) FROM examinees").fetchone()[0]
        models = {row[0] for row in con.execute("SELECT model_id FROM model_runs").fetchall()}
        texts = con.execute("SELECT count(*) FROM question_texts").fetchone()[0]
    finally:
        con.close()
    assert candidates == 100_000
    assert "random-baseline" in models
    assert texts == 370


def _broken_stores(tmp_path, demo_store):
    """A store whose year file is gone, and a file that is no DuckDB database at all."""
    no_year = tmp_path / "no_year" / "enem.duckdb"
    no_year.parent.mkdir()
    copy_store(demo_store, no_year)
    for year_file in (no_year.parent / f"{no_year.name}.years").iterdir():
        year_file.unlink()
    garbage = tmp_path / "garbage" / "enem.duckdb"
    garbage.parent.mkdir()
    garbage.write_bytes(b"not a database" * 100)
    return {"missing year file": no_year, "unreadable": garbage}


@pytest.mark.parametrize("page", ["app.py", "pages/Data.py"])
def test_a_viewer_of_a_broken_store_reads_no_path(monkeypatch, tmp_path, pages_demo_db, page):
    monkeypatch.chdir(ROOT)
    for case, db in _broken_stores(tmp_path, pages_demo_db).items():
        monkeypatch.setenv("ENEM_DB", str(db))
        app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        if page != "app.py":
            app.switch_page(page)
        app.run()
        shown = "\n".join(element.value for element in [*app.info, *app.warning, *app.error,
                                                        *app.markdown])
        assert shown, case
        assert str(tmp_path) not in shown, (case, shown)
        assert "/work" not in shown and str(ROOT) not in shown, (case, shown)
