"""Presentation mode in a real browser: the real Streamlit server, Debian's headless Chromium
through Playwright (fixtures of ``tests/test_browser.py``; FAILS, never skips, without them).

At 1280 and 1920 px wide: no sidebar, one figure drawn by plotly.js with type no smaller than
on the page, the controls above the title above the figure, the caption beside the figure and
the selection under the caption, nothing wider than the window; on every slide no two labels of the
figure overlap (titles, legend, colour bars, annotations against each other and against tick
labels); no console error; the arrow keys and Esc work. Screenshots go to
``test-artifacts/browser/presentation_*.png``.
"""

from __future__ import annotations

import itertools

import pytest

from tests.browser_support import ARTIFACTS, PAGE_TIMEOUT_MS, wait_until_still

SELECTION = "area=CN&area=MT&lang=en"
#: Font sizes (px) of the first figure's first y-axis tick label, subplot title and legend
#: entry, and of the caption under it.
FONT_SIZES = """() => {
  const size = (el) => parseFloat(getComputedStyle(el).fontSize);
  const plot = (s) => document.querySelector('.js-plotly-plot ' + s);
  const parts = Array.from(document.querySelectorAll(
    '[data-testid="stPlotlyChart"], [data-testid="stCaptionContainer"]'));
  const chart = parts.findIndex((el) => el.dataset.testid === 'stPlotlyChart');
  const caption = parts.slice(chart + 1).find((el) => el.dataset.testid !== 'stPlotlyChart');
  return [size(plot('.ytick text')), size(plot('.annotation-text')), size(plot('.legendtext')),
          size(caption)];
}"""
#: Bounding boxes, top to bottom, of the slide's parts.
PARTS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const q = (s) => document.querySelector(s);
  const captions = Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]'));
  return {buttons: box(q('.st-key-present_next')), heading: box(q('h3')),
          figure: box(q('.js-plotly-plot')), caption: box(captions[captions.length - 2]),
          selection: box(captions[captions.length - 1]),
          width: document.documentElement.scrollWidth, window: window.innerWidth};
}"""

#: Pairs of overlapping text boxes in the figure, tick labels against each other left out.
#: A text box includes the line's leading, so boxes count as overlapping when they share more
#: than a quarter of the lower one's height (and more than 2 px across).
OVERLAPS = """() => {
  const items = [];
  document.querySelectorAll('.js-plotly-plot .main-svg text').forEach((t) => {
    const r = t.getBoundingClientRect();
    if (!t.textContent.trim() || r.width === 0 || r.height === 0) return;
    items.push({text: t.textContent, tick: /tick$/.test(t.parentNode.getAttribute('class') || ''),
                l: r.left, r: r.right, t: r.top, b: r.bottom});
  });
  const clashes = [];
  items.forEach((a, i) => items.slice(i + 1).forEach((b) => {
    if (a.tick && b.tick) return;
    const across = Math.min(a.r, b.r) - Math.max(a.l, b.l);
    const down = Math.min(a.b, b.b) - Math.max(a.t, b.t);
    if (across > 2 && down > 0.25 * Math.min(a.b - a.t, b.b - b.t)) {
      clashes.push(a.text + ' × ' + b.text);
    }
  }));
  return clashes;
}"""


def _open(page, url: str) -> None:
    page.goto(url, timeout=PAGE_TIMEOUT_MS)
    _settle(page)


def _settle(page) -> None:
    """Wait until the script run ended and a plotly.js chart is drawn."""
    page.wait_for_selector('.js-plotly-plot .main-svg', timeout=PAGE_TIMEOUT_MS)
    wait_until_still(page)


@pytest.mark.parametrize("width,height", [(1280, 800), (1920, 1080)])
def test_presentation_renders_large_and_clean(server, browser, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    try:
        _open(page, f"{server}/?{SELECTION}")
        on_page = page.evaluate(FONT_SIZES)
        _open(page, f"{server}/?{SELECTION}&present=1")
        page.screenshot(path=str(ARTIFACTS / f"presentation_{width}.png"))
        assert page.locator('[data-testid="stSidebar"]').is_hidden()
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator(".js-plotly-plot").count() == 1
        assert page.get_by_text("Figure 1 of ").count() == 1
        # The slide shows the page's first figure (a tall one, squeezed to the window): its
        # type is no smaller anywhere (slide_scale: larger where the figure has the room).
        sizes = page.evaluate(FONT_SIZES)
        assert all(slide >= 0.99 * shown
                   for slide, shown in zip(sizes, on_page, strict=True)), (sizes, on_page)
        parts = page.evaluate(PARTS)
        order = [parts["buttons"], parts["heading"], parts["figure"]]
        for upper, lower in itertools.pairwise(order):
            assert upper["bottom"] <= lower["top"] + 1, parts
        assert parts["figure"]["right"] <= parts["caption"]["left"] + 1, parts
        assert parts["caption"]["bottom"] <= parts["selection"]["top"] + 1, parts
        assert parts["heading"]["bottom"] <= parts["caption"]["top"] + 1, parts
        assert parts["width"] <= parts["window"], parts
        assert parts["figure"]["right"] <= width

        slides = int(page.get_by_text("Figure 1 of ").inner_text().split(" of ")[1])
        clashes = {1: page.evaluate(OVERLAPS)}
        for number in range(2, slides + 1):
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"window.location.search.includes('slide={number}')",
                                   timeout=PAGE_TIMEOUT_MS)
            _settle(page)
            assert page.get_by_text(f"Figure {number} of {slides}").count() == 1
            clashes[number] = page.evaluate(OVERLAPS)
            if number in (2, 5):
                page.screenshot(path=str(ARTIFACTS / f"presentation_{width}_slide{number}.png"))
        assert not {number: found for number, found in clashes.items() if found}
        page.keyboard.press("ArrowRight")  # at the end: stays there
        wait_until_still(page)
        assert page.get_by_text(f"Figure {slides} of {slides}").count() == 1
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"window.location.search.includes('slide={slides - 1}')",
                               timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        assert page.get_by_text(f"Figure {slides - 1} of ").count() == 1
        page.keyboard.press("Escape")
        page.wait_for_function("!window.location.search.includes('present')",
                               timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        assert page.locator('[data-testid="stSidebar"]').is_visible()
        assert page.locator("h1").first.inner_text().startswith("When an LLM passes ENEM")
        assert "lang=en" in page.evaluate("window.location.search")
        assert not problems, problems
    finally:
        page.close()
