"""What the Chromium tests share: launching headless Chromium through Playwright, opening a
tab that collects the page's JavaScript errors, opening a page of the app and waiting until it
has settled, and reading the texts an st.dataframe paints on its canvas.

- ``CHROMIUM``, ``BROWSER_ARGS``, ``ARTIFACTS`` (screenshots), ``PAGE_TIMEOUT_MS`` and
  :func:`require_browser` (a test failure, never a skip, naming what to install).
- The ``browser`` fixture (:func:`launched_browser`): one Chromium per test module
  (:func:`session_chromium`, whose docstring says why not per session). Every tab it opens
  (``browser.new_page``) has a browser context of its own, so cookies, storage and the
  operator's cookie (:func:`grant_operator_cookie`) never pass from one test to another.
  tests/conftest.py registers this module as a plugin, so every fixture here is there for any
  test that names it (no import).
- The ``page`` fixture (:func:`canvas_page`): a fresh 1440×900 tab that records the texts
  painted on canvases (:data:`RECORD_CANVAS_TEXT`) and fails its test on a page error.
- :func:`new_page` (a tab whose ``errors`` list collects page errors) and :func:`checked_page`
  (the same, closed on leaving, asserting no page error).
- :func:`wait_until_rendered` and :func:`open_and_settle`: the script run over, the page's
  plotly.js charts drawn, and (by default) no exception box; :func:`wait_until_still`, the
  page unchanged for some animation frames (never a fixed sleep: a busy machine is slower).
- :data:`RECORD_CANVAS_TEXT`, an init script around ``fillText``, and :func:`painted_grids`,
  its reader: per st.dataframe the texts drawn, in page pixels, with the grid's visible box.

- ``serving`` and ``running`` (``testbed.browser``, shared with ``bench.browser_pages``, as are
  ``CHROMIUM``, ``BROWSER_ARGS`` and ``ARTIFACTS``): the real Streamlit server of ``app.py`` on
  a database (a free localhost port, its log under ``test-artifacts/``). One server per store
  for the session, shared by every module that only reads it: ``server`` serves the page
  fixtures' store with test model runs and ``demo_server`` the synthetic demo year (a module
  that writes its store, needs a fresh server, or serves a module-scoped store such as
  ``paper_db``, starts its own with ``serving``); ``browser_page`` is one tall tab on
  ``server`` per module (:func:`tall_page`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

# The server of app.py and Chromium's settings are testbed.browser's (bench.browser_pages drives
# the same); the Chromium tests import them from here with the rest.
from testbed.browser import (  # noqa: F401 - ROOT, TOKEN_ENV_VAR, free_port, running: for tests
    ARTIFACTS,
    BROWSER_ARGS,
    CHROMIUM,
    OPERATOR_TOKEN,
    ROOT,
    TOKEN_ENV_VAR,
    free_port,
    running,
    serving,
)

#: How long a page may take to do what a test waits for: generous, so a busy machine (make test
#: runs four test processes on two cores; CI may share its machine) is slow, not failing.
PAGE_TIMEOUT_MS = 180_000
#: The window of the first-hour tests: a common laptop screen.
FIRST_SCREEN = {"width": 1440, "height": 900}
#: The window of test_browser's whole-page screenshots.
TALL_SCREEN = {"width": 1440, "height": 2200}


def require_browser():
    """Playwright's sync API, or a test failure naming what to install."""
    if not CHROMIUM.exists() and not shutil.which(str(CHROMIUM)):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install it with "
                    "`apt-get install -y chromium` (Debian's package)", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the Python package playwright is missing: pip install playwright==1.65.2",
                    pytrace=False)
    return sync_playwright


@pytest.fixture(scope="module")
def session_chromium():
    """Headless Chromium, launched once per test module (screenshot folder created). Not once
    per session: Playwright's sync API keeps an event loop running while it is open, and the
    modules that start Playwright themselves (a server of their own, a browser with other
    flags) then fail with "Sync API inside the asyncio loop"."""
    sync_playwright = require_browser()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module", name="browser")
def launched_browser(session_chromium):
    """The session's Chromium (:func:`session_chromium`). A module that imports this fixture
    (some do, to name it) still gets that one browser, not one of its own."""
    return session_chromium


def new_page(browser, viewport: dict, init_script: str | None = None):
    """A new tab of ``viewport`` (its ``init_script`` run before any page script) whose
    ``errors`` attribute lists the page's uncaught JavaScript errors."""
    page = browser.new_page(viewport=viewport)
    # Every click, fill and read waits as long as a page may take (Playwright's own 30 s is
    # short on a busy machine).
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    if init_script:
        page.add_init_script(init_script)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    return page


@contextmanager
def checked_page(browser, viewport: dict, init_script: str | None = None) -> Iterator:
    """:func:`new_page`, closed on leaving; then asserts that the page raised no error."""
    page = new_page(browser, viewport, init_script)
    try:
        yield page
    finally:
        page.close()
    assert not page.errors, page.errors


def wait_until_rendered(page, charts: int) -> None:
    """Wait for the script run to finish and ``charts`` plotly.js charts to be drawn."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector('h1', timeout=PAGE_TIMEOUT_MS)
    if charts:
        page.wait_for_function(
            f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}",
            timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=PAGE_TIMEOUT_MS)
    # The running indicator shows only after a delay: on a busy machine it can be absent while
    # the page still streams its elements. The app root says when the script run is over.
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=PAGE_TIMEOUT_MS)
    wait_until_still(page)


#: True once the page has been still for :data:`STILL_FRAMES` animation frames in a row: no
#: script run, no running indicator, and the same page height, boxes of every chart and data
#: grid, number of drawn charts and of texts painted on canvases (when recorded).
STILL = """(frames) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const busy = !app || app.dataset.testScriptState === 'running'
    || !!document.querySelector('[data-testid="stStatusWidget"]');
  const boxes = [...document.querySelectorAll(
      '.js-plotly-plot, [data-testid="stDataFrame"], [data-testid="stImage"]')]
    .map(e => { const r = e.getBoundingClientRect();
                return [r.x, r.y, r.width, r.height].map(Math.round).join(','); });
  const state = [busy, document.documentElement.scrollHeight,
                 document.querySelectorAll('.js-plotly-plot .main-svg').length,
                 (window.__drawn || []).length, window.scrollY, ...boxes].join('|');
  if (busy || window.__stillState !== state) {
    window.__stillState = state;
    window.__stillFrames = 0;
    return false;
  }
  window.__stillFrames += 1;
  return window.__stillFrames >= frames;
}"""
#: Animation frames without change that make a page still (a third of a second at 60 Hz; a
#: busy machine draws frames more slowly, so the wait stretches with it). A test that needs an
#: element waits for that element too: an element can arrive after a still moment.
STILL_FRAMES = 20


def wait_until_still(page, frames: int = STILL_FRAMES) -> None:
    """Wait until nothing on the page moves or repaints (:data:`STILL`): after a script run,
    a scroll, a click or a key press, instead of sleeping a fixed time."""
    page.evaluate("window.__stillState = undefined; window.__stillFrames = 0")
    page.wait_for_function(STILL, arg=frames, polling="raf", timeout=PAGE_TIMEOUT_MS)


def open_and_settle(page, url: str, charts: int, *, expect_no_exception: bool = True) -> None:
    """Open ``url``, wait until it is rendered with ``charts`` charts; unless told otherwise,
    assert that the page shows no exception box."""
    page.goto(url, timeout=PAGE_TIMEOUT_MS)
    wait_until_rendered(page, charts)
    if expect_no_exception:
        assert page.locator('[data-testid="stException"]').count() == 0


#: Before any page script: record every text drawn on a canvas with its canvas (an index into
#: ``window.__canvases``), its anchor in that canvas's pixels (the current transform applied),
#: its width and its alignment, so :data:`GRID_TEXTS` can tell where a data grid drew its
#: headers and cells.
RECORD_CANVAS_TEXT = """
window.__drawn = [];
window.__canvases = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, maxWidth) {
  let index = window.__canvases.indexOf(this.canvas);
  if (index < 0) { window.__canvases.push(this.canvas); index = window.__canvases.length - 1; }
  const m = this.getTransform();
  window.__drawn.push({text: String(text), x: m.a * x + m.e, y: m.d * y + m.f,
                       width: this.measureText(String(text)).width * m.a,
                       align: this.textAlign, canvas: index});
  return fillText.apply(this, arguments);
};
"""

#: The recorded texts of each data grid, in page (CSS pixel) coordinates: one entry per
#: st.dataframe in page order, each text with left, right and y (alignment turned into a left
#: edge); the grid's visible box (left, right, top); its horizontal scroll.
GRID_TEXTS = """() => {
  const grids = [...document.querySelectorAll('[data-testid="stDataFrame"]')];
  return grids.map(grid => {
    const frame = grid.querySelector('[data-testid="stDataFrameResizable"]')
      .getBoundingClientRect();
    const scroller = grid.querySelector('.dvn-scroller');
    const texts = [];
    for (const d of window.__drawn) {
      const canvas = window.__canvases[d.canvas];
      if (!canvas.isConnected || !grid.contains(canvas)) continue;
      const rect = canvas.getBoundingClientRect();
      const ratio = canvas.width / rect.width;
      const x = rect.left + d.x / ratio, width = d.width / ratio;
      const left = d.align === 'right' || d.align === 'end' ? x - width
                   : d.align === 'center' ? x - width / 2 : x;
      texts.push({text: d.text, left: left, right: left + width, y: rect.top + d.y / ratio});
    }
    return {texts: texts, left: frame.left, right: frame.right, top: frame.top,
            scroll: scroller ? scroller.scrollLeft : 0};
  });
}"""


def painted_grids(page) -> list[dict]:
    """What :data:`RECORD_CANVAS_TEXT` saw drawn in each st.dataframe: :data:`GRID_TEXTS`."""
    return page.evaluate(GRID_TEXTS)


@pytest.fixture(name="page")
def canvas_page(browser):
    """A fresh 1440×900 tab recording canvas texts (:data:`RECORD_CANVAS_TEXT`); the test
    fails if the page raised a JavaScript error."""
    with checked_page(browser, FIRST_SCREEN, RECORD_CANVAS_TEXT) as page:
        yield page


def grant_operator_cookie(page, base: str) -> None:
    """Give ``page``'s browser context the operator's cookie for the server at ``base``, as
    opening the operator link that ``make run`` prints does."""
    port = int(base.rsplit(":", 1)[1].split("/", 1)[0])
    page.context.add_cookies([{"name": f"enem_llm_operator_{port}", "value": OPERATOR_TOKEN,
                               "url": base}])


@pytest.fixture(scope="session")
def server(pages_models_db):  # the page fixtures' database (tests/page_db_support.py)
    """The real Streamlit server on the test database with synthetic test model runs (one for
    the session: every test only reads the store)."""
    with serving(pages_models_db, "streamlit-server.log") as base:
        yield base


@pytest.fixture(scope="session")
def demo_server(pages_demo_db):  # the synthetic demo year (tests/page_db_support.py)
    """The real Streamlit server on the synthetic demo year (its own runs include the random
    baseline), one for the session: every test only reads the store."""
    with serving(pages_demo_db, "streamlit-demo-server.log") as base:
        yield base


def tall_page(browser):
    """A tab 1440 px wide and 2,200 px tall (a whole page in one screenshot)."""
    return new_page(browser, TALL_SCREEN)


@pytest.fixture(scope="module")
def browser_page(server, browser):
    page = tall_page(browser)
    try:
        yield page
    finally:
        page.close()
