"""Presentation mode as a newcomer meets it (issue 24, point 2), in Chromium on the demo store.

* "Present these figures" pressed on Person fit opens at Person fit's first figure (it opened
  at Home's, "Figure 1 of …"); the address names that slide, a new tab given the address opens
  the same one, and Previous still walks back into the pages before it.
* At 1280×720 and 1920×1080 every slide of the demo's deck fits the window without scrolling:
  the figure, the title, the Previous / Next buttons and the caption lie inside the window,
  the page is no taller or wider than it, and title, figure and caption do not overlap (a
  four-panel slide showed only CN and the top of CH at 1440×900).

Screenshots of every slide go to ``test-artifacts/browser/first_hour_presentation/``.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_support import (
    ARTIFACTS,
    PAGE_TIMEOUT_MS,
    launched_browser,  # noqa: F401  (the browser fixture)
    wait_until_still,
)

SHOTS = ARTIFACTS / "first_hour_presentation"
#: Pixels a box may stick out of the window or into its neighbour (sub-pixel rounding).
TOLERANCE = 2
#: The boxes of a slide's parts (left, top, right, bottom) and the page's scroll size.
PARTS = """() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
                        return [r.left, r.top, r.right, r.bottom]; };
  const q = (s) => document.querySelector(s);
  const captions = Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]'));
  const figure = captions.find((c) => c.innerText.startsWith('Figure '));
  return {chart: box(q('.js-plotly-plot')), svg: box(q('.js-plotly-plot .main-svg')),
          title: box(q('h3')), previous: box(q('.st-key-present_previous button')),
          next: box(q('.st-key-present_next button')), caption: box(figure),
          selection: box(captions.find((c) => c.innerText.startsWith('Selection'))),
          scrollHeight: document.scrollingElement.scrollHeight,
          scrollWidth: document.scrollingElement.scrollWidth,
          innerHeight: window.innerHeight, innerWidth: window.innerWidth};
}"""
#: True once the figure is drawn at its container's size (the slide's first script run can
#: be followed by a second one once the window has reported its size).
FILLED = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  const svg = document.querySelector('.js-plotly-plot .main-svg');
  const frame = document.querySelector('[data-testid="stPlotlyChart"]');
  if (!plot || !svg || !frame) return false;
  const [p, s, f] = [plot, svg, frame].map((el) => el.getBoundingClientRect());
  return Math.abs(s.height - f.height) < 3 && Math.abs(p.height - f.height) < 3;
}"""


def _settle(page) -> None:
    """Wait until no script run is going on and the figure is drawn at its container's size."""
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=PAGE_TIMEOUT_MS)
    # A second run may follow the first (the window's size reported): still means neither runs.
    wait_until_still(page)
    page.wait_for_function(FILLED, timeout=PAGE_TIMEOUT_MS)
    wait_until_still(page)


def _counter(page) -> tuple[int, int]:
    """(slide shown, slides in the deck) from the "Figure N of M" counter."""
    counter = page.get_by_text(re.compile(r"^\s*Figure \d+ of \d+\s*$")).first
    number, count = re.findall(r"\d+", counter.inner_text())
    return int(number), int(count)


def _title(page) -> str:
    """The slide's heading, once the page it was entered from is gone: under load that page
    (its sidebar's "Model runs" heading) can stay in the document for a moment."""
    page.wait_for_selector('[data-testid="stSidebar"]', state="hidden",
                           timeout=PAGE_TIMEOUT_MS)
    return page.locator('[data-testid="stMain"] h3').first.inner_text()


def test_presenting_from_person_fit_opens_at_its_first_figure(demo_server, browser):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.goto(f"{demo_server}/Person_fit", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')",
                               timeout=PAGE_TIMEOUT_MS)
        page.get_by_role("button", name="Present these figures").click()
        page.wait_for_function("window.location.search.includes('present=1')",
                               timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        number, count = _counter(page)
        assert _title(page).startswith("Person fit"), (_title(page), number, count)
        assert number > 1, "the deck opens with Home's figure; Person fit's come later"
        # The address names the slide shown: a new tab given it opens the same one.
        page.wait_for_function(f"window.location.search.includes('slide={number}')",
                               timeout=PAGE_TIMEOUT_MS)
        shared = page.url
        assert "/Person_fit" in shared
        other = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            other.goto(shared, timeout=PAGE_TIMEOUT_MS)
            _settle(other)
            assert _counter(other) == (number, count)
            assert _title(other).startswith("Person fit")
        finally:
            other.close()
        # Previous still walks the whole deck: the slide before is another page's figure.
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"window.location.search.includes('slide={number - 1}')",
                               timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        assert _counter(page) == (number - 1, count)
        assert not _title(page).startswith("Person fit")
    finally:
        page.close()


def _inside(box: list[float], width: int, height: int) -> bool:
    left, top, right, bottom = box
    return (left >= -TOLERANCE and top >= -TOLERANCE and right <= width + TOLERANCE
            and bottom <= height + TOLERANCE)


def _overlap(one: list[float], other: list[float]) -> float:
    """How far two boxes overlap, in pixels of the smaller direction (0 when apart)."""
    across = min(one[2], other[2]) - max(one[0], other[0])
    down = min(one[3], other[3]) - max(one[1], other[1])
    return max(0.0, min(across, down))


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_every_slide_of_the_demo_fits_the_window(demo_server, browser, width,
                                                  height):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    try:
        page.goto(f"{demo_server}/?present=1&slide=1", timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        number, count = _counter(page)
        assert number == 1 and count > 10
        for number in range(1, count + 1):
            if number > 1:
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    f"window.location.search.includes('slide={number}')",
                    timeout=PAGE_TIMEOUT_MS)
                _settle(page)
            assert _counter(page) == (number, count)
            page.screenshot(path=str(SHOTS / f"{width}x{height}_slide{number:02d}.png"))
            parts = page.evaluate(PARTS)
            where = f"slide {number} ({_title(page)[:40]})"
            for name in ("chart", "svg", "title", "previous", "next", "caption", "selection"):
                if parts[name] is None or not _inside(parts[name], width, height):
                    problems.append(f"{where}: {name} {parts[name]} outside {width}×{height}")
            if parts["scrollHeight"] > parts["innerHeight"] + TOLERANCE:
                problems.append(f"{where}: the page scrolls ({parts['scrollHeight']} px high)")
            if parts["scrollWidth"] > parts["innerWidth"] + TOLERANCE:
                problems.append(f"{where}: the page scrolls sideways")
            for one, other in (("title", "chart"), ("title", "caption"), ("chart", "caption"),
                               ("previous", "title"), ("next", "title")):
                if parts[one] and parts[other] and _overlap(parts[one], parts[other]) > TOLERANCE:
                    problems.append(f"{where}: {one} {parts[one]} overlaps {other} "
                                    f"{parts[other]}")
    finally:
        page.close()
    assert not problems, "\n".join(problems)


#: Every text a figure draws outside its legend (titles, axis titles, tick labels), as boxes.
FIGURE_TEXTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot svg text'))
  .filter((t) => !t.closest('.legend') && t.textContent.trim() !== '')
  .map((t) => { const r = t.getBoundingClientRect();
                return {text: t.textContent, box: [r.left, r.top, r.right, r.bottom]}; })
  .filter((t) => t.box[2] - t.box[0] > 0 && t.box[3] - t.box[1] > 0)"""


def test_four_areas_of_test_information_stay_readable_on_a_small_slide(demo_server,
                                                                       browser):
    """The tallest figure of the deck (an information panel and model rows per area) squeezed
    into a 1280×720 slide: no panel title, axis title or tick label lies on another."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{demo_server}/Test_information?present=1", timeout=PAGE_TIMEOUT_MS)
        _settle(page)
        assert _title(page).startswith("Test information")
        texts = page.evaluate(FIGURE_TEXTS)
        page.screenshot(path=str(SHOTS.parent / "first_hour_test_information_slide.png"))
        assert any(t["text"].startswith("MT") for t in texts)  # all four areas drawn
        clashes = [(one["text"], other["text"]) for i, one in enumerate(texts)
                   for other in texts[i + 1:] if _overlap(one["box"], other["box"]) > TOLERANCE]
        assert not clashes, clashes
    finally:
        page.close()
