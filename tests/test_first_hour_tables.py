"""Issue 24 ("a first hour without stumbling"), points 3, 6 and 7 on the Accuracy, Person fit and
Test information pages, checked in Chromium at 1440×900 with the sidebar open.

- Point 3: each page's key column (the human percentile, the trust verdict, the information
  verdict) is drawn inside the table's visible part and the viewport, with no horizontal scroll,
  its values whole; on the demo store with the test runs and on the paper's nine series.
- Point 6: no cell of the trust table reads "None" or "nan" where a θ bin has no humans; no
  label of the humans' 5th percentile sits inside a plot area (the legend names the line); the
  all-blank tests' dark cells are boxed and named in the legend and caption.
- Point 7: the Test information model lanes sit right under their curve panel, close together.

st.dataframe draws on a canvas, so the tests record what it draws: an init script wraps
``CanvasRenderingContext2D.fillText`` and keeps each text with its box in page coordinates.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from store.connection import open_reader
from store.human_queries import blank_tests
from tests.browser_support import (
    ARTIFACTS,
    PAGE_TIMEOUT_MS,
    canvas_page,  # noqa: F401  (the page fixture: a tab recording canvas texts)
    launched_browser,  # noqa: F401  (the browser fixture)
    open_and_settle,
    painted_grids,
    wait_until_still,
)
from tests.browser_support import serving as _serving

VIEWPORT = {"width": 1440, "height": 900}
#: Texts a table shows for a missing value when nothing better was chosen.
MISSING_WORDS = {"None", "nan", "NaN", "<NA>", "null", "NaT"}
#: Page → the header of its key column.
KEY_COLUMNS = {
    "Accuracy_vs_ability": "human percentile of mean θ",
    "Person_fit": "θ trusted?",
    "Test_information": "in plain words",
}
#: Largest distance in px between a Test information panel's bottom and its first lane's
#: centre, and between two lanes' centres.
LANE_GAP_PX = 40

@pytest.fixture(scope="module")
def server(pages_models_db):
    with _serving(pages_models_db, "streamlit-first-hour-tables.log") as base:
        yield base


def _grids(page, shot: str) -> list[dict]:
    """Scroll the page's tables into view, screenshot the last, return
    :func:`~tests.browser_support.painted_grids`."""
    tables = page.locator('[data-testid="stDataFrame"]')
    tables.first.wait_for(timeout=PAGE_TIMEOUT_MS)
    for index in range(tables.count()):
        tables.nth(index).scroll_into_view_if_needed()
        wait_until_still(page)
    page.screenshot(path=str(ARTIFACTS / f"first_hour_tables_{shot}.png"))
    return painted_grids(page)


def _headers(grid: dict) -> list[dict]:
    """The texts drawn in the grid's header row (the first 36 px)."""
    return [t for t in grid["texts"] if t["y"] - grid["top"] < 36]


@pytest.mark.parametrize("path", list(KEY_COLUMNS))
def test_the_key_column_is_on_screen_without_scrolling(server, page, path):
    _assert_key_column_on_screen(page, f"{server}/{path}", path, path)


@pytest.fixture(scope="module")
def paper_server(paper_db):  # the paper's nine series (tests/paper_db_support.py)
    with _serving(paper_db, "streamlit-first-hour-tables-paper.log") as base:
        yield base


@pytest.mark.parametrize("path", list(KEY_COLUMNS))
def test_the_key_column_is_on_screen_with_the_papers_runs(paper_server, page, path):
    """Longer series names, nine series: the key column still fits beside them."""
    _assert_key_column_on_screen(page, f"{paper_server}/{path}?year=2022", path,
                                 f"paper_{path}")


def _assert_key_column_on_screen(page, url: str, path: str, shot: str) -> None:
    open_and_settle(page, url, 1)
    sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
    assert sidebar and sidebar["width"] > 200, "the sidebar is open at 1440 px"
    grid = _grids(page, shot)[0]
    assert grid["scroll"] == 0
    assert grid["right"] <= VIEWPORT["width"]
    headers = _headers(grid)
    key = [h for h in headers if h["text"] == KEY_COLUMNS[path]]
    assert key, f"'{KEY_COLUMNS[path]}' was never drawn; headers: {[h['text'] for h in headers]}"
    for box in key:
        assert grid["left"] <= box["left"] and box["right"] <= grid["right"] - 1, (box, grid)
    # Its values are whole too: each ends before the next column's header starts.
    key_left = key[-1]["left"]
    later = sorted(h["left"] for h in headers if h["left"] > key[-1]["right"])
    cells = [t for t in grid["texts"] if t["y"] - grid["top"] >= 36
             and key_left - 2 <= t["left"] and (not later or t["left"] < later[0] - 8)]
    assert cells, "no value drawn under the key column"
    limit = (later[0] - 8) if later else grid["right"]
    assert all(cell["right"] <= limit + 1 for cell in cells), [
        c["text"] for c in cells if c["right"] > limit + 1]
    assert not MISSING_WORDS & {t["text"] for t in grid["texts"]}


def test_the_trust_table_says_what_a_missing_value_means(server, page):
    # A small state's candidates: the models' θ bins hold none of them in some areas.
    open_and_settle(page, f"{server}/Person_fit?group=state:RR", 2)
    _grids(page, "person_fit_small_group")
    # Every column drawn once: the grid scrolled to its right end in steps.
    for step in range(1, 5):
        page.evaluate("""(step) => { const s = document.querySelector(
            '[data-testid="stDataFrame"] .dvn-scroller');
            s.scrollLeft = (s.scrollWidth - s.clientWidth) * step / 4; }""", step)
        wait_until_still(page)
    page.screenshot(path=str(ARTIFACTS / "first_hour_tables_person_fit_small_group_right.png"))
    grid = painted_grids(page)[0]
    drawn = [t["text"] for t in grid["texts"]]
    assert not MISSING_WORDS & set(drawn), sorted(MISSING_WORDS & set(drawn))
    assert "—" in drawn, "the case under test: a θ bin without humans"
    caption = page.locator('[data-testid="stCaptionContainer"]').filter(
        has_text="θ trusted = all four").inner_text()
    assert "— : not available (no candidate in the model's θ bin" in caption


def _boxes(page, figure: int, selector: str) -> list[dict]:
    return page.evaluate(
        """([figure, selector]) => [...document.querySelectorAll('.js-plotly-plot')[figure]
             .querySelectorAll(selector)].map(e => {const r = e.getBoundingClientRect();
             return {text: e.textContent, left: r.left, right: r.right, top: r.top,
                     bottom: r.bottom};})""", [figure, selector])


def _overlap(a: dict, b: dict) -> bool:
    return (a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"]
            and b["top"] < a["bottom"])


def test_person_fit_names_the_5th_percentile_outside_the_plot_areas(server, page):
    open_and_settle(page, f"{server}/Person_fit", 2)
    for figure in (0, 1):
        page.locator(".js-plotly-plot").nth(figure).scroll_into_view_if_needed()
        wait_until_still(page)
        page.screenshot(path=str(ARTIFACTS / f"first_hour_tables_person_fit_{figure}.png"))
        areas = _boxes(page, figure, ".nsewdrag")
        labels = _boxes(page, figure, "g.annotation")
        markers = _boxes(page, figure, ".scatterlayer .point")
        assert areas and markers
        inside = [a["text"] for a in labels if any(_overlap(a, area) for area in areas)]
        assert not inside, f"labels inside a plot area of figure {figure}: {inside}"
        assert not [a["text"] for a in labels if any(_overlap(a, m) for m in markers)]
        legend = [t["text"] for t in _boxes(page, figure, ".legendtext")]
        assert "humans' 5th percentile of l_z" in legend, legend


def test_person_fit_explains_the_all_blank_cells(server, page, pages_models_db: Path):
    con = open_reader(pages_models_db)
    try:
        blank = int(blank_tests(con, 2023)["blank"].sum())
    finally:
        con.close()
    assert blank > 0
    open_and_settle(page, f"{server}/Person_fit", 2)
    legend = [t["text"] for t in _boxes(page, 0, ".legendtext")]
    assert "all-blank tests (no answer marked)" in legend, legend
    boxed = page.evaluate(
        """() => document.querySelectorAll('.js-plotly-plot')[0]._fullData
             .filter(t => t.name === 'all-blank tests (no answer marked)')
             .reduce((n, t) => n + t.customdata.reduce((a, b) => a + b, 0), 0)""")
    assert boxed == blank
    caption = page.locator('[data-testid="stCaptionContainer"]').filter(
        has_text="per (0.1 θ × 0.1 l_z) cell").inner_text()
    assert f"Boxed: the {blank:,} all-blank tests" in caption
    # Left out by the sidebar's switch: nothing to box, nothing said.
    open_and_settle(page, f"{server}/Person_fit?blank=out", 2)
    legend = [t["text"] for t in _boxes(page, 0, ".legendtext")]
    assert "all-blank tests (no answer marked)" not in legend
    assert "all-blank tests (no answer" not in page.locator(
        '[data-testid="stCaptionContainer"]').filter(has_text="per (0.1 θ × 0.1 l_z) cell"
                                                     ).inner_text()


#: Per model-lane axis of the Test information figure: the bottom of its curve panel and the
#: centres of its lanes, in page pixels (top to bottom).
LANE_POSITIONS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  const layout = gd._fullLayout, top = gd.getBoundingClientRect().top;
  const axes = Object.keys(layout).filter(k => /^yaxis\\d*$/.test(k)).map(k => layout[k]);
  const result = [];
  for (const lanes of axes.filter(a => a.type === 'category' && a.visible !== false)) {
    const x = lanes.anchor;
    const panel = axes.find(a => !a.overlaying && a.type !== 'category' &&
                                 layout['xaxis' + a.anchor.slice(1)].matches === x);
    const count = (lanes.tickvals || []).length;
    if (!panel || !count) continue;
    const centres = [];
    for (let i = 0; i < count; i++) centres.push(top + lanes._offset + lanes.l2p(i));
    centres.sort((a, b) => a - b);
    result.push({panel_bottom: top + panel._offset + panel._length, centres: centres,
                 lanes_bottom: top + lanes._offset + lanes._length});
  }
  return result;
}"""


def test_test_information_lanes_sit_under_their_panel(server, page):
    open_and_settle(page, f"{server}/Test_information?model=test-strong-it&model=test-odd-base",
                    1)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    wait_until_still(page)
    page.screenshot(path=str(ARTIFACTS / "first_hour_tables_test_information.png"))
    blocks = page.evaluate(LANE_POSITIONS)
    assert len(blocks) == 4 and all(len(b["centres"]) == 2 for b in blocks), blocks
    for block in blocks:
        centres = block["centres"]
        assert centres[0] - block["panel_bottom"] <= LANE_GAP_PX, block
        assert all(b - a <= LANE_GAP_PX for a, b in pairwise(centres)), block
        assert block["lanes_bottom"] - centres[-1] <= LANE_GAP_PX, block
