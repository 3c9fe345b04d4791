"""One booklet rule on every page: with a booklet chosen, model runs that took any booklet of
the year holding the same items are shown (their answers carry over through the item ids), and
runs on a booklet with other items get an empty state naming the booklet they took."""

from __future__ import annotations

import pytest

from store.connection import open_reader, writing
from store.layout import copy_store
from store.model_queries import model_points
from tests.browser_support import BROWSER_ARGS, CHROMIUM, PAGE_TIMEOUT_MS
from tests.browser_support import require_browser as _require_browser
from tests.browser_support import serving as _serving
from tests.browser_support import wait_until_rendered as _wait_until_rendered
from tests.page_support import PER_MODEL_PAGES, assert_clean, charts, messages, run_page


def _taken_and_other(db) -> tuple[str, int, int, list[str]]:
    """(area, the booklet the test runs took most, another booklet of that area, series)."""
    con = open_reader(db)
    try:
        area, took = con.execute(
            """SELECT area, booklet_id FROM model_scores WHERE year = 2023 AND area = 'CN'
               GROUP BY ALL ORDER BY count(*) DESC LIMIT 1""").fetchone()
        other = con.execute(
            """SELECT min(booklet_id) FROM booklets WHERE year = 2023 AND area = ?
               AND booklet_id <> ? AND valid""", [area, took]).fetchone()[0]
        series = [row[0] for row in con.execute(
            "SELECT DISTINCT coalesce(label, model_id) FROM model_runs").fetchall()]
        return area, int(took), int(other), series
    finally:
        con.close()


def _points(db, area, booklet, series):
    con = open_reader(db)
    try:
        return model_points(con, 2023, area, booklet, None, None, series)
    finally:
        con.close()


def test_a_booklet_with_the_same_items_shows_the_models_answers(pages_models_db):
    area, took, other, series = _taken_and_other(pages_models_db)
    on_taken = _points(pages_models_db, area, took, series)
    on_other = _points(pages_models_db, area, other, series)
    assert len(on_taken) > 0
    assert on_other.equals(on_taken)


@pytest.fixture(scope="module")
def other_items_db(tmp_path_factory, pages_models_db):
    """A copy where one booklet of the area holds one item the models' booklet lacks."""
    area, took, other, _ = _taken_and_other(pages_models_db)
    target = tmp_path_factory.mktemp("booklet_rule") / "other_items.duckdb"
    copy_store(pages_models_db, target)
    with writing(target, year=2023) as con:
        con.execute("""UPDATE items SET item_id = 999999
                       WHERE year = 2023 AND booklet_id = ? AND position = 1""", [other])
    return target, area, took, other


def test_a_booklet_with_other_items_shows_no_model(other_items_db):
    db, area, took, other = other_items_db
    series = _taken_and_other(db)[3]
    assert len(_points(db, area, took, series)) > 0
    assert _points(db, area, other, series).empty


def test_pages_say_which_booklet_the_models_took(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    _, took, other, _ = _taken_and_other(pages_models_db)
    app = run_page("pages/Accuracy_vs_ability.py", {"booklet": str(other)})
    assert_clean(app)
    captions = " | ".join(c.value for c in app.caption)
    assert f"same items as booklet {took}" in captions
    assert "No model runs" not in messages(app)
    figure = charts(app)[0]
    assert any(trace.get("x") is not None and trace.get("name") not in (None, "Humans")
               and trace.get("type") == "scatter" for trace in figure["data"])


#: Pages that place a run's θ on the chosen booklet (the item pages match answers by item id;
#: adaptive tests draw items from the whole bank, not from a booklet; Conditions compares each
#: run with itself on the booklets it took; Years spans every year, so one year's booklet
#: does not apply).
THETA_PAGES = [page for page in PER_MODEL_PAGES
               if page not in ("pages/Response_patterns.py", "pages/Item_explorer.py",
                               "pages/Adaptive_testing.py", "pages/Conditions.py",
                               "pages/Years.py")]


@pytest.mark.parametrize("page", THETA_PAGES)
def test_pages_name_the_booklet_models_took_when_items_differ(monkeypatch, other_items_db, page):
    db, _, took, other = other_items_db
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(page, {"booklet": str(other)})
    assert_clean(app)
    assert f"The selected models took booklet {took}" in messages(app)


def test_in_a_browser_the_empty_state_names_the_booklet_taken(other_items_db):
    """The same empty state, as Chromium shows it (no exception, the booklet named)."""
    db, _, took, other = other_items_db
    sync_playwright = _require_browser()
    with _serving(db, "streamlit-booklet-rule.log") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(f"{base}/Accuracy_vs_ability?area=CN&booklet={other}",
                      timeout=PAGE_TIMEOUT_MS)
            _wait_until_rendered(page, 1)
            alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
            assert f"The selected models took booklet {took}" in alerts
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            browser.close()
