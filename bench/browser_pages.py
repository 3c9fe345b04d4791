"""End-to-end page time in a real browser on a full-size year.

    .venv/bin/python -m bench.browser_pages [--rows 3900000] [--repeat 2]

Serves ``app.py`` with Streamlit on the full-size database of :mod:`bench.pages` (built once:
``--rows`` synthetic candidates in INEP's format, ingested, six TEST model runs) and drives
Debian's Chromium with Playwright as a user does: open Home, then click each page in the
navigation menu. A page's time runs from the click until the script run has ended (the
app's ``data-test-script-state`` is ``notRunning`` again), every Plotly chart on the page is
drawn, and nothing changed for :data:`SETTLE_S` (the settle window itself is not counted). Each page
is visited ``--repeat`` times in turn: the first visit runs its queries cold (fresh server, empty
caches), later visits are served by the caches, as when a user moves between pages. The baseline
printed beside each page is the same server's time to answer its health check in the same run, the
floor of any round trip. Targets (issue 11): ≤ 1.5 s for every page, ≤ 1 s for most. Writes
bench/out/browser_pages.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.pages import OUT, build_database
from testbed.browser import BROWSER_ARGS, CHROMIUM, serving  # the Chromium tests' own
from workflows.views import RUNS, VIEWS

#: Seconds without any change before a page counts as finished (not counted in its time).
SETTLE_S = 0.6
POLL_S = 0.025
TIMEOUT_S = 120.0
EVERY_PAGE_TARGET, MOST_PAGES_TARGET = 1.5, 1.0

#: Page state read by the polling loop: is a script running, how many charts, how many drawn.
_STATE_JS = """() => {
    const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    const drawn = document.querySelectorAll('.js-plotly-plot .main-svg').length;
    // The app's own script state flips to "running" as soon as a page is asked for (the
    // status widget only shows after a delay, too late to tell a run has started).
    const app = document.querySelector('[data-testid="stApp"]');
    const running = !app || app.getAttribute('data-test-script-state') !== 'notRunning';
    const title = (document.querySelector('h1') || {}).innerText || '';
    return [running, charts, drawn, title];
}"""


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def health_round_trip(base: str, repeat: int = 20) -> float:
    """Median seconds for the server to answer its health check (the baseline)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        _healthy(base)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def wait_until_done(page, previous_title: str, started: float) -> float:
    """Seconds from ``started`` until the newly opened page (its title no longer
    ``previous_title``) is finished (see the module notes)."""
    last_change, last_state, done_at = started, None, None
    deadline = started + TIMEOUT_S
    while time.perf_counter() < deadline:
        running, charts, drawn, heading = page.evaluate(_STATE_JS)
        now = time.perf_counter()
        state = (running, charts, drawn, heading)
        if state != last_state:
            last_state, last_change = state, now
        finished = (not running and heading and heading != previous_title and drawn >= charts)
        if finished and done_at is None:
            done_at = last_change
        if not finished:
            done_at = None
        if done_at is not None and now - last_change >= SETTLE_S:
            return done_at - started
        time.sleep(POLL_S)
    raise TimeoutError(f"page after {previous_title!r}: not finished within {TIMEOUT_S:.0f} s")


def heading(page) -> str:
    """The page's title (its h1) as shown now."""
    return page.evaluate(_STATE_JS)[3]


def open_from_menu(page, title: str) -> float:
    """Click the menu entry ``title``; seconds until that page is finished."""
    before = heading(page)
    # The menu is in the header bar: Home a plain link, every other page in its section's
    # drop-down, opened before the clock starts.
    link = page.locator('[data-testid="stTopNavLink"]').filter(has_text=title)
    if not link.count():
        section = next(view.section for view in VIEWS if view.title == title)
        page.locator('[data-testid="stTopNavSection"]').filter(has_text=section).click()
        link = page.locator('[data-testid="stTopNavDropdownLink"]').filter(has_text=title)
    link = link.first
    started = time.perf_counter()
    link.click()
    return wait_until_done(page, before, started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_900_000, help="candidates (default 3.9M)")
    parser.add_argument("--repeat", type=int, default=2, help="visits per page")
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--width", type=int, default=1440, help="browser width in px")
    parser.add_argument("--db", type=Path, help="time this database instead (no build)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    db = args.db or build_database(args.rows, args.seed)
    views = [view for view in VIEWS if view is not RUNS]
    results: dict[str, list[float]] = {view.title: [] for view in views}
    with serving(db, "browser_pages_server.log") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 1400})
        baseline = health_round_trip(base)
        page.goto(base, timeout=TIMEOUT_S * 1000)
        page.wait_for_selector("h1", timeout=TIMEOUT_S * 1000)
        page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')",
                               timeout=TIMEOUT_S * 1000)
        for visit in range(args.repeat):
            for view in views:
                # Home is the page already open on the first round: go elsewhere first.
                if view.title == "Home" and visit == 0:
                    open_from_menu(page, "Data")
                seconds = open_from_menu(page, view.title)
                results[view.title].append(seconds)
                print(f"visit {visit + 1}  {view.title:22s} {seconds:6.2f} s", flush=True)
        browser.close()
    print(f"\nbaseline (health check round trip): {baseline * 1000:.1f} ms")
    print(f"{'page':22s} {'first s':>8s} {'again s':>8s}  first/{EVERY_PAGE_TARGET}s  "
          f"again/{MOST_PAGES_TARGET}s  first/baseline")
    for title, times in results.items():
        again = statistics.median(times[1:]) if len(times) > 1 else float("nan")
        print(f"{title:22s} {times[0]:8.2f} {again:8.2f}  {times[0] / EVERY_PAGE_TARGET:11.2f}"
              f"  {again / MOST_PAGES_TARGET:9.2f}  {times[0] / baseline:13.0f}")
    firsts = [times[0] for times in results.values()]
    under_one = sum(t <= MOST_PAGES_TARGET for t in firsts)
    print(f"worst first visit {max(firsts):.2f} s (target ≤ {EVERY_PAGE_TARGET} s); "
          f"{under_one} of {len(firsts)} pages ≤ {MOST_PAGES_TARGET} s on the first visit")
    (OUT / "browser_pages.json").write_text(json.dumps(
        {"rows": args.rows, "baseline_s": baseline, "pages": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
