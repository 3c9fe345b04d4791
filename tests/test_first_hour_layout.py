"""Layout in a real browser at 1440×900 (issue 24, point 7): what a newcomer sees in the first
screen of a page, measured on the rendered elements in headless Chromium.

- The navigation leaves room for the filters: the sidebar's first filters (Year, Areas) are
  inside the 900-px viewport, the sidebar is not taken up by the menu, and the toolbar offers
  nothing for deploying.
- Populations: the box figure's row labels stay clear of the other panel's markers (the paper's
  nine runs, whose long names ran over the left panel), the pooling switch's label is shown
  whole, and the Area chosen on the page is in the URL and survives a reload.
- Paper tables: Table 1's legend does not cover its panels' titles ("CTT accuracy (%)").

Screenshots go to ``test-artifacts/browser/first_hour_*.png``.
"""

from __future__ import annotations

import pytest

from tests.browser_support import (
    ARTIFACTS,
    FIRST_SCREEN,
    PAGE_TIMEOUT_MS,
    launched_browser,  # noqa: F401  (the browser fixture)
    new_page,
    open_and_settle,
    wait_until_rendered,
)
from tests.browser_support import serving as _serving

VIEWPORT = FIRST_SCREEN

#: Every pair (row label of one panel, marker or error bar of the other panel) whose boxes
#: intersect, in the first figure of the page: "label × element class".
_LABELS_ON_OTHER_PANEL = r"""
() => {
  const plot = document.querySelector('.js-plotly-plot');
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom
                        && b.top < a.bottom;
  const found = [];
  for (const [mine, other] of [['xy', 'x2y2'], ['x2y2', 'xy']]) {
    const labels = [...plot.querySelectorAll(`.subplot.${mine} .yaxislayer-above text`)]
      .filter(text => text.textContent.trim());
    const marks = [...plot.querySelectorAll(
      `.subplot.${other} .point, .subplot.${other} .errorbar path`)];
    for (const label of labels) {
      const a = label.getBoundingClientRect();
      for (const mark of marks) {
        const b = mark.getBoundingClientRect();
        if (b.width + b.height > 0 && hit(a, b)) {
          found.push(`${label.textContent} × ${mark.getAttribute('class')}`);
        }
      }
    }
  }
  return found;
}
"""

#: Elements inside the element given whose text is cut (wider content than box).
_CUT_TEXT = r"""
(root) => [root, ...root.querySelectorAll('*')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 && e.textContent.trim())
  .map(e => e.textContent.trim())
"""


@pytest.fixture
def page(browser):
    """A fresh tab at 1440×900 that collects the page's JavaScript errors."""
    tab = new_page(browser, VIEWPORT)
    try:
        yield tab
    finally:
        tab.close()


def _inside_viewport(box: dict | None) -> bool:
    return (box is not None and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= VIEWPORT["width"]
            and box["y"] + box["height"] <= VIEWPORT["height"])


def test_filters_are_in_view_and_the_menu_is_not_in_the_sidebar(demo_server, page):
    open_and_settle(page, f"{demo_server}/Accuracy_vs_ability", 1)
    page.screenshot(path=str(ARTIFACTS / "first_hour_filters_1440x900.png"))
    sidebar = page.locator('[data-testid="stSidebar"]')
    year = sidebar.locator('[data-testid="stSelectbox"]', has_text="Year").first
    areas = sidebar.locator('[data-testid="stMultiSelect"]', has_text="Areas").first
    for name, widget in (("Year", year), ("Areas", areas)):
        box = widget.bounding_box()
        assert _inside_viewport(box), f"the {name} filter lies outside 1440×900: {box}"
    # The sidebar is the filters': a navigation menu there takes at most a quarter of it.
    menu = sidebar.locator('[data-testid="stSidebarNav"]')
    menu_height = menu.bounding_box()["height"] if menu.count() else 0.0
    assert menu_height <= VIEWPORT["height"] / 4, f"the sidebar's menu is {menu_height:.0f} px"
    # The menu is in the header bar instead, every page one click (or a drop-down) away.
    assert page.locator('[data-testid="stTopNav"]').is_visible()
    assert not page.errors, page.errors


def test_the_toolbar_offers_nothing_for_deploying(demo_server, page):
    open_and_settle(page, f"{demo_server}/", 1)
    header = page.locator('[data-testid="stHeader"]')
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
    assert header.get_by_text("Deploy").count() == 0
    page.locator('[data-testid="stMainMenuButton"]').click()
    menu = page.locator('[data-testid="stMainMenuPopover"], [role="menu"]').first
    menu.wait_for(timeout=PAGE_TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "first_hour_toolbar_menu.png"))
    assert "deploy" not in menu.inner_text().lower()


def test_populations_pooling_switch_shows_its_whole_label(demo_server, page):
    open_and_settle(page, f"{demo_server}/Populations", 2)
    switch = page.locator('[data-testid="stMain"] [data-testid="stCheckbox"]').filter(
        has=page.locator('input[aria-label^="Pool"]')).first
    label = switch.locator('[data-testid="stWidgetLabel"]')
    switch.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "first_hour_populations_controls.png"))
    cut = label.evaluate(_CUT_TEXT)
    assert not cut, f"the switch's label is cut: {cut}"


def test_populations_area_is_in_the_url_and_survives_a_reload(demo_server, page):
    open_and_settle(page, f"{demo_server}/Populations", 2)
    picker = page.locator('[data-testid="stMain"] input[aria-label="Area"]')
    assert picker.input_value() == "CN"
    picker.click()
    page.get_by_role("option", name="MT", exact=True).click()
    page.wait_for_function("new URLSearchParams(window.location.search).get('pop_area') === 'MT'",
                           timeout=PAGE_TIMEOUT_MS)
    wait_until_rendered(page, 2)
    shared = page.url
    page.goto(shared, timeout=PAGE_TIMEOUT_MS)
    wait_until_rendered(page, 2)
    assert page.locator('[data-testid="stMain"] input[aria-label="Area"]').input_value() == "MT"
    assert "MT," in page.locator('[data-testid="stCaptionContainer"]').filter(
        has_text="each population").first.inner_text()
    assert not page.errors, page.errors


def test_populations_row_labels_clear_the_other_panel(paper_db, browser):
    """The paper's nine runs in 2022 (no candidates: the models alone), whose names are the
    longest row labels: each panel's labels stay off the other panel's markers."""
    tab = browser.new_page(viewport=VIEWPORT)
    try:
        with _serving(paper_db, "streamlit-first-hour-paper.log") as base:
            open_and_settle(tab, f"{base}/Populations?year=2022", 2)
            figure = tab.locator(".js-plotly-plot").first
            figure.scroll_into_view_if_needed()
            tab.screenshot(path=str(ARTIFACTS / "first_hour_populations_paper.png"))
            labels = figure.locator(".subplot.xy .yaxislayer-above text").count()
            assert labels == 9
            overlaps = tab.evaluate(_LABELS_ON_OTHER_PANEL)
    finally:
        tab.close()
    assert not overlaps, overlaps


def test_table1_legend_clears_the_panel_titles(demo_server, page):
    open_and_settle(page, f"{demo_server}/Paper_tables", 1)
    figure = page.locator(".js-plotly-plot").first
    figure.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "first_hour_table1.png"))
    legend = figure.locator(".legend .bg").bounding_box()
    titles = figure.locator(".annotation-text")
    assert titles.count() == 3
    assert titles.first.text_content() == "CTT accuracy (%)"
    for index in range(titles.count()):
        title = titles.nth(index).bounding_box()
        apart = (legend["y"] + legend["height"] <= title["y"]
                 or title["y"] + title["height"] <= legend["y"]
                 or legend["x"] + legend["width"] <= title["x"]
                 or title["x"] + title["width"] <= legend["x"])
        assert apart, f"the legend {legend} covers the title {titles.nth(index).text_content()}"
