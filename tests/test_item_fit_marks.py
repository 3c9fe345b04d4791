"""The items whose 3PL curve misfits the humans (S-X², the Item gaps page's fit table) are
marked in the Item explorer and under the Response patterns heatmap.

The marks are checked on a copy of the page fixtures' store with one misfitting item planted:
its b moved far from where the candidates' answers put it, so S-X² flags it on its booklet.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard.item_fit import MARK, MARK_LEGEND
from store.connection import open_reader, writing
from store.item_queries import main_booklet
from store.layout import copy_store
from tests.page_support import assert_clean, charts, run_page
from workflows.items.checks import item_checks
from workflows.items.fit import FIT_COLUMNS
from workflows.items.form_fit import form_item_fit, misfitting_items
from workflows.items.selection import ItemSelection

YEAR = 2023
EXPLORER = "pages/Item_explorer.py"
PATTERNS = "pages/Response_patterns.py"
#: How far the planted item's b is moved (logits): far enough for any sample to see it.
PLANTED_SHIFT = 1.5


def _fit(db: Path, area: str, booklet: int, language: int | None) -> pd.DataFrame:
    con = open_reader(db)
    try:
        return form_item_fit(con, YEAR, area, booklet, language)
    finally:
        con.close()


def _booklet(db: Path, area: str) -> int:
    con = open_reader(db)
    try:
        booklet = main_booklet(con, YEAR, area)
    finally:
        con.close()
    assert booklet is not None
    return booklet


@pytest.fixture(scope="module")
def planted(tmp_path_factory, pages_models_db) -> tuple[Path, int, int]:
    """(a copy of the store, CN's main booklet, an item of it planted to misfit)."""
    target = tmp_path_factory.mktemp("fit_marks") / "planted.duckdb"
    copy_store(pages_models_db, target)
    booklet = _booklet(target, "CN")
    fit = _fit(target, "CN", booklet, None)
    fitting = fit[~fit["misfit"].astype(bool)]
    item = int(fitting["item_id"].iloc[len(fitting) // 2])
    with writing(target, year=2023) as con:
        con.execute("UPDATE items SET b = b + ? WHERE year = ? AND item_id = ?",
                    [PLANTED_SHIFT, YEAR, item])
    assert item in misfitting_items(_fit(target, "CN", booklet, None))
    return target, booklet, item


@pytest.fixture(scope="module")
def without_tables(tmp_path_factory, pages_models_db) -> Path:
    """A copy of the store as an older ingest left it: no per-score item tables."""
    target = tmp_path_factory.mktemp("fit_marks_old") / "old.duckdb"
    copy_store(pages_models_db, target)
    with writing(target, year=2023) as con:
        con.execute("DROP TABLE item_score_counts")
    return target


def test_the_form_fit_is_the_item_gaps_fit_table(pages_models_db, without_tables):
    con = open_reader(pages_models_db)
    try:
        for area, languages in (("CN", (None,)), ("LC", (0, 1))):
            booklet = main_booklet(con, YEAR, area)
            assert booklet is not None
            for language in languages:
                selection = ItemSelection(YEAR, area, booklet, language, None, None, ())
                expected = item_checks(con, selection).fit
                assert len(expected) > 40
                pd.testing.assert_frame_equal(
                    form_item_fit(con, YEAR, area, booklet, language), expected)
    finally:
        con.close()
    empty = _fit(without_tables, "CN", _booklet(without_tables, "CN"), None)
    assert empty.empty and list(empty.columns) == FIT_COLUMNS


def _explorer(db: Path, monkeypatch, item: int, booklet: int):
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(EXPLORER, {"item": str(item), "area": "CN", "booklet": str(booklet)})
    assert_clean(app)
    assert int(app.selectbox(key="explorer.item").value) == item
    return app


def test_the_explorer_shows_the_fit_row_of_its_item(planted, monkeypatch):
    db, booklet, item = planted
    fit = _fit(db, "CN", booklet, None).set_index("item_id")
    fitting = int(fit.index[~fit["misfit"].astype(bool)][0])
    for shown_item, flagged in ((item, True), (fitting, False)):
        app = _explorer(db, monkeypatch, shown_item, booklet)
        shown = {metric.label: metric.value for metric in app.metric}
        row = fit.loc[shown_item]
        assert float(shown["S-X² (human fit)"]) == pytest.approx(row["sx2"], abs=0.05)
        assert int(shown["df"]) == int(row["df"])
        assert float(shown["p"]) == pytest.approx(row["p"], rel=0.05)
        assert float(shown["q (BH)"]) == pytest.approx(row["q"], rel=0.05)
        assert float(shown["RMSEA"]) == pytest.approx(row["rmsea"], abs=5e-4)
        assert shown["Fit flag"] == (f"{MARK} misfit" if flagged else "fits")
        warned = [w.value for w in app.warning if "misfits the humans" in w.value]
        assert bool(warned) == flagged
        captions = " | ".join(c.value for c in app.caption)
        assert f"question {int(row['position'])} of booklet {booklet}" in captions


def test_the_heatmap_marks_the_misfitting_items_and_no_other(planted, monkeypatch):
    db, booklet, item = planted
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PATTERNS, {"area": "CN", "booklet": str(booklet)})
    assert_clean(app)
    (figure,) = charts(app)
    flagged = misfitting_items(_fit(db, "CN", booklet, None))
    columns = next(t for t in figure["data"] if t.get("name") == "share correct")["x"]
    axis = figure["layout"]["xaxis"]
    assert axis["showticklabels"] is True
    assert axis["tickvals"] == [c for c in columns if int(c) in flagged]
    assert str(item) in axis["tickvals"]
    assert set(axis["ticktext"]) == {MARK}
    # The b curve's hover says it too, on the flagged columns only.
    curve = next(t for t in figure["data"] if t.get("name") == "b (difficulty)")
    noted = {row[0] for row in curve["customdata"] if MARK in row[2]}
    assert noted == {str(i) for i in flagged}
    captions = " | ".join(c.value for c in app.caption)
    assert MARK_LEGEND in captions
    assert f"{len(flagged)} of the {len(columns)}" in captions


def test_without_score_tables_each_view_says_so(without_tables, monkeypatch):
    booklet = _booklet(without_tables, "CN")
    monkeypatch.setenv("ENEM_DB", str(without_tables))
    app = run_page(EXPLORER, {"area": "CN", "booklet": str(booklet)})
    assert_clean(app)
    assert not [m for m in app.metric if m.label.startswith("S-X²")]
    captions = " | ".join(c.value for c in app.caption)
    assert "No human item fit" in captions and "ingest the year again" in captions
    app = run_page(PATTERNS, {"area": "CN", "booklet": str(booklet)})
    assert_clean(app)
    (figure,) = charts(app)
    assert figure["layout"]["xaxis"]["showticklabels"] is False
    captions = " | ".join(c.value for c in app.caption)
    assert f"No {MARK} item-fit marks" in captions
