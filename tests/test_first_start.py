"""The README's `make run` path: with no database, the home page builds the demo first."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from store.connection import open_reader

ROOT = Path(__file__).resolve().parent.parent


def test_home_page_builds_the_demo_database_on_first_start(monkeypatch, tmp_path):
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
