"""The sidebar and page frame word the flagged-booklet floor from the rule's own constant.

``enem.score_batches.REPRODUCED_SHARE_FLOOR`` decides which booklets are flagged; the sidebar
switch's help and the warning under every page title state it through
``reproduced_share_text`` ("99%" today) instead of typing it, so the words follow the rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from enem.score_batches import reproduced_share_text
from store.connection import writing
from store.layout import copy_store

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def flagged_db(monkeypatch, tmp_path, pages_models_db) -> Path:
    """The page tests' database with CN's first booklet reproducing none of its notas."""
    path = tmp_path / "flagged.duckdb"
    copy_store(pages_models_db, path)
    with writing(path, year=2023) as con:
        con.execute("""UPDATE booklet_audit SET nota_matched = 0 WHERE booklet_id = (
                           SELECT min(booklet_id) FROM booklet_audit WHERE area = 'CN')""")
    monkeypatch.setenv("ENEM_DB", str(path))
    return path


def test_flagged_booklet_texts_state_the_rule_floor(flagged_db):
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.query_params["area"] = "CN"
    app = app.switch_page("pages/Accuracy_vs_ability.py").run()
    assert not app.exception, [e.value for e in app.exception]
    floor = reproduced_share_text()
    assert floor == "99%"
    warning = " ".join(w.value for w in app.warning)
    assert (f"fewer than {floor} of their candidates' official notas come out to the decimal"
            in warning)
    switch = app.sidebar.toggle(key="sidebar.reproduced")
    assert switch.help == ("Booklets where the published item parameters reproduce fewer than "
                           f"{floor} of INEP's official notas; the Data page lists them")
