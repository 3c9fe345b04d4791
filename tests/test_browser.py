"""Real-browser test: the real Streamlit server on a free localhost port, every page opened in
headless Chromium (Debian's ``/usr/bin/chromium``) through Playwright.

Checks that no page shows an exception or error box, that its charts were drawn by plotly.js in
the browser, that a sidebar change reaches the URL, and that a deep link as the very first
request of a fresh server shows the app's own navigation. Screenshots go to
``test-artifacts/browser/``. This test FAILS (never skips) when Playwright or Chromium is
missing: ``.ci/run`` installs both.
"""

from __future__ import annotations

import pytest

# Chromium's side and the real server live in tests/browser_support.py (its fixtures
# browser, server and browser_page are registered by conftest.py).
from tests.browser_support import ARTIFACTS, PAGE_TIMEOUT_MS, open_and_settle
from tests.browser_support import require_browser as _require_browser  # noqa: F401
from tests.browser_support import serving as _serving
from tests.browser_support import tall_page as _new_page
from tests.browser_support import wait_until_rendered as _wait_until_rendered
from workflows.views import VIEWS

#: URL path → (screenshot name, charts expected, title start)
PAGES: dict[str, tuple[str, int, str]] = {
    "": ("home", 1, "When an LLM passes ENEM"),
    "Accuracy_vs_ability": ("accuracy_vs_ability", 1, "Accuracy vs ability"),
    "Person_fit": ("person_fit", 2, "Person fit"),
    "Response_patterns": ("response_patterns", 1, "Response patterns"),  # one area at a time
    "Test_information": ("test_information", 1, "Test information"),
    "Discrimination": ("discrimination", 1, "Discrimination"),
    "Options_and_traps": ("options_and_traps", 1, "Options and traps"),  # its first tab
    "Item_explorer": ("item_explorer", 2, "Item explorer"),
    "Data": ("data", 0, "Data"),
}
PAGES["Runs"] = ("runs", 0, "Model runs")
#: The navigation menu, in order (the home page used to show as "app").
#: The menu every page must show: the views of workflows.views, in order.
NAVIGATION = [view.title for view in VIEWS]


def _navigation(page) -> list[str]:
    """The page names of the navigation menu in the header bar, in order: its plain links
    (Home), then the pages of each section's drop-down, opened one after the other."""
    names = [text.strip() for text in
             page.locator('[data-testid="stTopNavLink"]').all_inner_texts()]
    sections = page.locator('[data-testid="stTopNavSection"]')
    for index in range(sections.count()):
        sections.nth(index).click()
        links = page.locator('[data-testid="stTopNavPopover"] [data-testid="stTopNavDropdownLink"]')
        links.first.wait_for(timeout=PAGE_TIMEOUT_MS)
        names += [text.strip() for text in links.all_inner_texts()]
        page.keyboard.press("Escape")
        links.first.wait_for(state="detached", timeout=PAGE_TIMEOUT_MS)
    return names


def open_view(page, title: str) -> None:
    """Click the navigation entry of the page titled ``title`` (a plain link in the header bar
    or one inside a section's drop-down)."""
    plain = page.locator('[data-testid="stTopNavLink"]', has_text=title)
    if plain.count():
        plain.first.click()
        return
    section = next(view.section for view in VIEWS if view.title == title)
    page.locator('[data-testid="stTopNavSection"]', has_text=section).click()
    page.locator('[data-testid="stTopNavDropdownLink"]', has_text=title).first.click()


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders_in_chromium(server, browser_page, path):
    name, charts, title = PAGES[path]
    browser_page.errors.clear()
    browser_page.goto(f"{server}/{path}", timeout=PAGE_TIMEOUT_MS)
    _wait_until_rendered(browser_page, charts)
    browser_page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    assert browser_page.locator("h1").first.inner_text().startswith(title)
    assert browser_page.locator('[data-testid="stException"]').count() == 0
    assert browser_page.locator('[data-testid="stAlertContentError"]').count() == 0
    drawn = browser_page.locator(".js-plotly-plot").count()
    assert drawn >= charts, f"{drawn} charts drawn, expected {charts}"
    if charts:
        plot = browser_page.locator(".js-plotly-plot .main-svg").first
        assert plot.bounding_box()["height"] > 100
        assert browser_page.locator(".js-plotly-plot .point, .js-plotly-plot .hm, "
                                    ".js-plotly-plot .heatmaplayer image, "
                                    ".js-plotly-plot .js-line").count() > 0
    assert not browser_page.errors, browser_page.errors


def test_sidebar_choice_reaches_the_url_and_the_next_page(server, browser_page):
    open_and_settle(browser_page, f"{server}/Accuracy_vs_ability", 1, expect_no_exception=False)
    browser_page.get_by_text("English (en)").first.click()
    browser_page.wait_for_function("window.location.search.includes('lang=en')",
                                   timeout=PAGE_TIMEOUT_MS)
    _wait_until_rendered(browser_page, 1)
    open_view(browser_page, "Person fit")
    browser_page.wait_for_function("window.location.pathname.endsWith('Person_fit')",
                                   timeout=PAGE_TIMEOUT_MS)
    _wait_until_rendered(browser_page, 2)
    browser_page.wait_for_function("window.location.search.includes('lang=en')",
                                   timeout=PAGE_TIMEOUT_MS)
    assert browser_page.locator('[data-testid="stException"]').count() == 0
    browser_page.screenshot(path=str(ARTIFACTS / "person_fit_english.png"), full_page=True)


def test_shared_url_opens_the_same_view(server, browser_page):
    open_and_settle(browser_page, f"{server}/Person_fit?area=MT&lang=en&shots=4", 2,
                    expect_no_exception=False)
    assert browser_page.locator('[data-testid="stSidebar"]').get_by_text(
        "MT — Mathematics").count() >= 1
    assert browser_page.locator('[data-testid="stSidebar"]').get_by_text(
        "CN — Natural Sciences").count() == 0
    assert "shots=4" in browser_page.evaluate("window.location.search")


def test_clicking_a_heatmap_cell_opens_the_item(server, browser_page):
    open_and_settle(browser_page, f"{server}/Response_patterns", 1, expect_no_exception=False)
    cells = browser_page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    browser_page.mouse.click(cells["x"] + cells["width"] * 0.3, cells["y"] + cells["height"] * 0.5)
    browser_page.wait_for_function(
        "document.querySelector('h1') && document.querySelector('h1').innerText"
        ".startsWith('Item explorer')", timeout=PAGE_TIMEOUT_MS)
    _wait_until_rendered(browser_page, 2)
    browser_page.wait_for_function("window.location.search.includes('item=')",
                                   timeout=PAGE_TIMEOUT_MS)
    assert browser_page.locator('[data-testid="stException"]').count() == 0


def test_a_deep_link_into_a_fresh_server_shows_the_app_navigation(pages_models_db,
                                                                   browser):
    """The first request a fresh server ever gets is a shared link into a page: Streamlit must
    run it through app.py (navigation, sidebar, filters from the URL), not as a lone file of
    the pages/ folder."""
    page = _new_page(browser)
    try:
        with _serving(pages_models_db, "streamlit-fresh-server.log") as fresh:
            open_and_settle(page, f"{fresh}/Person_fit?year=2023&area=MT&lang=en", 2,
                            expect_no_exception=False)
            page.screenshot(path=str(ARTIFACTS / "fresh_deep_link_person_fit.png"),
                            full_page=True)
            deep = _navigation(page)
            assert page.locator("h1").first.inner_text().startswith("Person fit")
            sidebar = page.locator('[data-testid="stSidebar"]')
            assert sidebar.get_by_text("MT — Mathematics").count() >= 1
            assert "lang=en" in page.evaluate("window.location.search")
            assert page.locator('[data-testid="stException"]').count() == 0
            open_and_settle(page, f"{fresh}/", 1, expect_no_exception=False)
            root = _navigation(page)
        assert not page.errors, page.errors
    finally:
        page.close()
    assert deep == root
    assert root == NAVIGATION


def test_clicking_a_discrimination_bar_lists_that_bars_items(server, browser_page):
    """The clicked bar, not an overlapping one, fills the pickers and the item list."""
    open_and_settle(browser_page, f"{server}/Discrimination?area=CN", 1, expect_no_exception=False)
    traces = browser_page.locator(".js-plotly-plot .trace.bars").all()
    boxes = [(index, path.bounding_box()) for index, trace in enumerate(traces)
             for path in trace.locator("path").all()]
    index, box = max(((i, b) for i, b in boxes if b and b["height"] > 2),
                     key=lambda pair: pair[1]["height"])
    population = "humans" if index == 0 else "models"
    browser_page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.3)
    browser_page.wait_for_function(
        "[...document.querySelectorAll('[data-testid=\"stCaptionContainer\"]')]"
        f".some(c => c.innerText.includes('whose {population} DI lies in'))",
        timeout=PAGE_TIMEOUT_MS)
    caption = browser_page.locator('[data-testid="stCaptionContainer"]').filter(
        has_text="DI lies in").first.inner_text()
    listed = int(caption.split(" items of CN")[0])
    # The bar's height in items equals the number of items listed for it.
    heights = browser_page.evaluate(
        f"Array.from(document.querySelectorAll('.js-plotly-plot')[0]._fullData[{index}].y)")
    assert listed == max(heights) > 0
