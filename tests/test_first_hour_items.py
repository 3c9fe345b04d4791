"""Issue 24 ("a first hour without stumbling"), point 6 and its kind on the item pages: Item
explorer, Options and traps, Discrimination and Data.

- The Item explorer of 2019 (the paper's real runs, which answered booklets 519–522) opens on an
  item the runs answered, and an item they did not answer says which booklets hold it and
  which booklet the runs answered, never "No model runs for 2019 CN" while CN has runs.
- Share and count axes end above their tallest bar (Options and traps' position bias, the
  Item explorer's option shares, Discrimination's panels), read from the figures plotly.js drew.
- At 1440×900 each table's key column is drawn inside the table and the viewport with no
  horizontal scroll (the trap table's x/y, the length tests' p, the Data page's scoring and
  run status), and no table cell reads "None" or "nan".

The AppTest checks use the paper's store (``paper_db`` of tests/paper_db_support.py). A
st.dataframe is painted on a canvas, so the browser checks note every text the page paints
(an init script around ``fillText``) with where it landed on the page.
"""

from __future__ import annotations

import pytest

from store.connection import open_reader
from tests.browser_support import (
    ARTIFACTS,
    FIRST_SCREEN,
    PAGE_TIMEOUT_MS,
    canvas_page,  # noqa: F401  (the page fixture: a tab recording canvas texts)
    launched_browser,  # noqa: F401  (the browser fixture)
    open_and_settle,
    painted_grids,
    wait_until_still,
)
from tests.browser_support import serving as _serving
from tests.page_support import assert_clean, messages, run_page

VIEWPORT = FIRST_SCREEN
EXPLORER = "pages/Item_explorer.py"
#: Booklets the paper's runs answered in 2019 (CN, CH, LC, MT).
RUN_BOOKLETS_2019 = {"CN": 519, "CH": 520, "LC": 521, "MT": 522}
#: The grid header row's height in px: texts drawn within it are headers.
HEADER_PX = 36
#: The least room above a bar axis's tallest bar, as a multiple of its height.
HEADROOM = 1.08
#: What a table cell shows for a missing value when the page chose nothing better.
MISSING_WORDS = {"None", "nan", "NaN", "<NA>", "NaT", "null"}

def _answered_items(db, year: int, area: str) -> set[int]:
    with open_reader(db) as con:
        return {row[0] for row in con.execute(
            "SELECT DISTINCT item_id FROM model_responses WHERE year = ? AND area = ?",
            [year, area]).fetchall()}


def _booklets_of(db, year: int, item_id: int) -> list[int]:
    with open_reader(db) as con:
        return sorted(row[0] for row in con.execute(
            "SELECT booklet_id FROM items WHERE year = ? AND item_id = ?",
            [year, item_id]).fetchall())


@pytest.mark.parametrize("area", ["CN", "LC"])
def test_the_2019_item_explorer_opens_on_an_item_the_runs_answered(monkeypatch, paper_db,
                                                                   area):
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    app = run_page(EXPLORER, {"year": "2019", "area": area})
    assert_clean(app)
    shown = app.selectbox(key="explorer.item").value
    assert shown in _answered_items(paper_db, 2019, area), shown
    assert RUN_BOOKLETS_2019[area] in _booklets_of(paper_db, 2019, shown)
    assert "No model runs" not in messages(app)
    assert "No selected model run answered" not in messages(app)
    # The runs' markers are drawn on the item's curve, and the model DI is a number.
    metrics = {metric.label: metric.value for metric in app.metric}
    assert metrics["Model DI (patterns ranked by θ)"] != "—"


def test_an_item_no_run_answered_says_where_the_runs_are(monkeypatch, paper_db):
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    answered = _answered_items(paper_db, 2019, "CN")
    with open_reader(paper_db) as con:
        item_id = con.execute(
            "SELECT item_id FROM items WHERE year = 2019 AND area = 'CN' GROUP BY item_id "
            "ORDER BY min(co_posicao), item_id").fetchall()
    unanswered = next(item for (item,) in item_id if item not in answered)
    app = run_page(EXPLORER, {"year": "2019", "area": "CN", "item": str(unanswered)})
    assert_clean(app)
    assert app.selectbox(key="explorer.item").value == unanswered
    text = messages(app)
    assert "No model runs for 2019 CN" not in text, text
    holders = ", ".join(str(b) for b in _booklets_of(paper_db, 2019, unanswered))
    assert f"No selected model run answered item {unanswered} (booklets {holders})" in text
    assert "answered booklet 519, which does not hold it" in text
    # The picker tells the items with runs from those without.
    labels = app.selectbox(key="explorer.item").options
    label = next(option for option in labels if f" item {unanswered} " in option)
    assert label.endswith("· nobody answered it"), label
    assert sum(not option.endswith("· nobody answered it") for option in labels) == len(
        answered & {int(item) for (item,) in item_id}), "every answered item unmarked"


# --- In Chromium ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def paper_server(paper_db):
    with _serving(paper_db, "streamlit-first-hour-items-paper.log") as base:
        yield base


#: Per drawn figure: its meta/title-free identity (trace count), and per y axis the range
#: plotly.js used and the tallest bar drawn against it.
BAR_AXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const axes = {};
  for (const trace of gd._fullData) {
    if (trace.type !== 'bar' || trace.orientation === 'h' || trace.visible !== true) continue;
    const name = 'yaxis' + (trace.yaxis === 'y' ? '' : trace.yaxis.slice(1));
    const tallest = Math.max(...Array.from(trace.y).filter(v => Number.isFinite(v)));
    const range = gd._fullLayout[name].range;
    if (!axes[name]) axes[name] = {top: Math.max(...range), tallest: -Infinity};
    axes[name].tallest = Math.max(axes[name].tallest, tallest);
  }
  return {title: gd._fullLayout.yaxis && gd._fullLayout.yaxis.title
                   ? gd._fullLayout.yaxis.title.text : '', axes: axes};
})"""


def _bar_axes(page, y_title: str) -> dict:
    figures = [f for f in page.evaluate(BAR_AXES) if f["title"] == y_title]
    assert len(figures) == 1, [f["title"] for f in page.evaluate(BAR_AXES)]
    assert figures[0]["axes"], "no bars drawn"
    return figures[0]["axes"]


def _assert_headroom(axes: dict, shot: str, page) -> None:
    page.screenshot(path=str(ARTIFACTS / f"first_hour_items_{shot}.png"))
    for name, axis in axes.items():
        # The bar ends visibly below the frame. Plotly's own autorange stops about 5% above
        # the tallest bar (top = tallest / 0.95), which reads as ending on it; ask for more.
        assert axis["tallest"] > 0, (name, axis)
        assert axis["top"] >= axis["tallest"] * HEADROOM, (name, axis)


def test_the_position_bias_axis_ends_above_the_tallest_bar(demo_server, page):
    open_and_settle(page, f"{demo_server}/Options_and_traps?section=Position+bias", 1)
    chart = page.locator(".js-plotly-plot").filter(has_text="uniform")
    chart.scroll_into_view_if_needed()
    _assert_headroom(_bar_axes(page, "answers choosing the option shown there"),
                     "options_positions", page)


def test_the_option_share_axis_of_an_item_ends_above_its_tallest_bar(paper_server, page,
                                                                      paper_db):
    # An item the runs answered, named in the link (the default item is tested above).
    item = min(_answered_items(paper_db, 2019, "CN"))
    open_and_settle(page, f"{paper_server}/Item_explorer?year=2019&area=CN&item={item}", 2)
    _assert_headroom(_bar_axes(page, "share of answers"), "explorer_options", page)


def test_discrimination_panels_end_above_their_tallest_bar(paper_server, page):
    open_and_settle(page, f"{paper_server}/Discrimination?year=2019", 1)
    axes = _bar_axes(page, "items")
    assert len(axes) == 4, axes
    _assert_headroom(axes, "discrimination", page)


def _tables(page) -> int:
    """How many tables the page drew (waiting for the first)."""
    page.wait_for_selector('[data-testid="stDataFrame"] canvas', timeout=PAGE_TIMEOUT_MS)
    return page.locator('[data-testid="stDataFrame"]').count()


#: True once the index-th grid holds a painted text equal to the given one (a grid further down
#: the page may paint only after it is scrolled to, and a slow machine takes its time).
_PAINTED = """([index, text]) => {
  const grid = document.querySelectorAll('[data-testid="stDataFrame"]')[index];
  return !!grid && window.__drawn.some(d => d.text === text
      && grid.contains(window.__canvases[d.canvas]));
}"""


def _grid(page, index: int, shot: str, painted: str | None = None) -> dict:
    """The index-th grid's painted texts, after scrolling it into view (and, given
    ``painted``, after waiting up to a minute for that text to be drawn in it)."""
    tables = page.locator('[data-testid="stDataFrame"]')
    tables.nth(index).wait_for(timeout=PAGE_TIMEOUT_MS)
    tables.nth(index).scroll_into_view_if_needed()
    wait_until_still(page)
    if painted is not None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            page.wait_for_function(_PAINTED, arg=[index, painted], timeout=60_000)
        except PlaywrightTimeout:
            pass  # the assertion on the texts says what was drawn instead
    page.screenshot(path=str(ARTIFACTS / f"first_hour_items_{shot}.png"))
    return painted_grids(page)[index]


def _assert_key_column(grid: dict, header: str) -> None:
    assert grid["scroll"] == 0
    assert grid["right"] <= VIEWPORT["width"]
    headers = [t for t in grid["texts"] if t["y"] - grid["top"] < HEADER_PX]
    key = [h for h in headers if h["text"] == header]
    assert key, f"'{header}' was never drawn; headers: {[h['text'] for h in headers]}"
    for box in key:
        assert grid["left"] <= box["left"] and box["right"] <= grid["right"] - 1, (box, grid)
    # Its values are drawn whole, before the next column starts (or the table ends).
    later = sorted(h["left"] for h in headers if h["left"] > key[-1]["right"])
    limit = (later[0] - 8) if later else grid["right"]
    cells = [t for t in grid["texts"] if t["y"] - grid["top"] >= HEADER_PX
             and key[-1]["left"] - 2 <= t["left"] < limit]
    assert cells, f"no value drawn under '{header}'"
    assert all(cell["right"] <= limit + 1 for cell in cells), [
        c["text"] for c in cells if c["right"] > limit + 1]


def _assert_no_missing_words(grid: dict) -> None:
    drawn = {t["text"] for t in grid["texts"]}
    assert not MISSING_WORDS & drawn, sorted(MISSING_WORDS & drawn)


@pytest.mark.parametrize(("section", "charts", "header", "shot"), [
    ("Traps", 1, "x/y", "trap_table"),
    ("Lengths", 0, "p", "length_tests"),
])
def test_options_tables_show_their_key_column(demo_server, page, section, charts, header,
                                              shot):
    open_and_settle(page, f"{demo_server}/Options_and_traps?section={section}", charts)
    grid = _grid(page, 0, shot)
    _assert_key_column(grid, header)
    _assert_no_missing_words(grid)


#: True once a data grid follows the Data page's "Model runs" heading.
_RUNS_TABLE_DRAWN = """() => {
  const heading = [...document.querySelectorAll('h3')]
      .find(h => h.textContent.startsWith('Model runs'));
  return !!heading && [...document.querySelectorAll('[data-testid="stDataFrame"]')]
      .some(grid => heading.compareDocumentPosition(grid) & Node.DOCUMENT_POSITION_FOLLOWING);
}"""


@pytest.mark.parametrize(("index", "header", "shot"), [
    (0, "scoring", "data_ingests"),
    (-1, "status", "data_runs"),
])
def test_data_tables_show_their_key_column_and_no_none(paper_server, page, index, header,
                                                       shot):
    open_and_settle(page, f"{paper_server}/Data", 0)
    # The runs table is the page's last element: on a busy machine the page can still be
    # streaming its elements once the running indicator is gone, so wait for that table.
    page.wait_for_function(_RUNS_TABLE_DRAWN, timeout=PAGE_TIMEOUT_MS)
    grid = _grid(page, index % _tables(page), shot, painted=header)
    _assert_key_column(grid, header)
    _assert_no_missing_words(grid)


def test_the_discrimination_item_table_reads_no_none(paper_server, page):
    """2019 has no candidates and the runs answered half the items: missing DIs are '—'."""
    open_and_settle(page, f"{paper_server}/Discrimination?year=2019", 1)
    assert _tables(page) == 2
    grid = _grid(page, 1, "discrimination_items")
    _assert_no_missing_words(grid)
    assert "—" in {t["text"] for t in grid["texts"]}, "the case under test: items without DI"


def test_response_pattern_rows_fill_their_heatmap(demo_server, page):
    """One row per repetition: the cells start at the top of the heatmap and end at its bottom
    (autorange padded the shared row axis for the l_z column, leaving bands of empty rows)."""
    open_and_settle(page, f"{demo_server}/Response_patterns?area=CN", 1)
    page.get_by_text("One row per repetition").click()
    # The rerun replaces the chart: until the new one is drawn there may be no plot at all.
    page.wait_for_function(
        "(document.querySelector('.js-plotly-plot')?._fullLayout?.yaxis?._categories?.length"
        " ?? 0) > 60", timeout=PAGE_TIMEOUT_MS)
    wait_until_still(page)
    page.screenshot(path=str(ARTIFACTS / "first_hour_items_patterns_per_repetition.png"))
    axis = page.evaluate("""() => { const a = document.querySelector('.js-plotly-plot')
        ._fullLayout.yaxis; return {range: a.range, rows: a._categories.length}; }""")
    bottom, top = axis["range"]
    assert top == pytest.approx(-0.5, abs=0.01), axis
    assert bottom == pytest.approx(axis["rows"] - 0.5, abs=0.01), axis
