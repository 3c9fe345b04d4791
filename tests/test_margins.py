"""Margins wide enough before drawing (dashboard.margins): the estimate covers what plotly.js's
automargin would add in Chromium, so it never has to widen them and draw a second time."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import plotly
import plotly.graph_objects as go
import pytest

from dashboard.lane_figure import histogram_with_lanes
from dashboard.margins import CHAR_PX, presize_margins
from tests.browser_support import BROWSER_ARGS, CHROMIUM, require_browser

NAMES = ["gpt-3.5-turbo · 4-shot · 30 shuffles", "a much longer run label · few-shot · seeds",
         "short"]


def _bars() -> go.Figure:
    """Horizontal bars named by long labels on a category axis, with a vertical legend."""
    figure = go.Figure([go.Bar(x=[1, 2, 3], y=NAMES, orientation="h", name=name)
                        for name in ("humans of São Paulo, public school", "models")])
    figure.update_layout(margin={"l": 10, "r": 20, "t": 40, "b": 30},
                         xaxis_title="mean θ", yaxis_title="population")
    return figure


def _lanes() -> go.Figure:
    points = pd.DataFrame([{"area": "CN", "model": name, "run_id": "r", "shuffle": s,
                            "theta": 0.1 * s, "theta_se": 0.3, "lz": 0.0, "ctt": s}
                           for name in NAMES for s in range(3)])
    figure, _ = histogram_with_lanes(
        ["CN"], {"CN": pd.DataFrame({"bin": [0.0, 0.1], "n": [3, 5]})}, points, "theta",
        bin_width=0.1, styles={name: ("#000000", "circle") for name in NAMES}, x_title="θ",
        human_label="humans")
    return figure


def test_margins_widen_to_the_labels_and_never_narrow():
    figure = _bars()
    presize_margins(figure)
    longest = max(len(name) for name in NAMES)
    assert figure.layout.margin.l >= longest * CHAR_PX
    assert figure.layout.margin.r >= len("humans of São Paulo, public school") * CHAR_PX
    assert figure.layout.margin.b > 30 and figure.layout.margin.t == 40  # top: left as set
    wide = _bars()
    wide.update_layout(margin={"l": 900, "r": 900, "b": 300})
    presize_margins(wide)
    assert (wide.layout.margin.l, wide.layout.margin.r, wide.layout.margin.b) == (900, 900, 300)


@pytest.mark.parametrize("build", [_bars, _lanes], ids=["bars-and-legend", "lanes"])
def test_chromium_keeps_the_presized_margins(build, tmp_path: Path):
    """Drawn by plotly.js with automargin on (the template's), the sides the estimate covers
    (left, right, bottom) come out exactly as sent: nothing was widened, so nothing was drawn
    twice. Without the estimate the same figure's margins grow (the check can fail)."""
    sync_playwright = require_browser()
    script = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    measure = """async (fig) => { const g = document.getElementById('g'); Plotly.purge(g);
        await Plotly.newPlot(g, fig.data, fig.layout);
        const s = g._fullLayout._size; return [s.l, s.r, s.b]; }"""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_content("<html><body><div id=g style='width:1000px'></div></body></html>")
            page.add_script_tag(path=str(script))
            raw = build()
            grown = page.evaluate(measure, json.loads(raw.to_json()))
            sent = (raw.layout.margin.l, raw.layout.margin.r, raw.layout.margin.b)
            assert any(got > want + 1 for got, want in zip(grown, sent, strict=True)), grown
            presized = build()
            presize_margins(presized)
            drawn = page.evaluate(measure, json.loads(presized.to_json()))
            margin = presized.layout.margin
            assert drawn == pytest.approx([margin.l, margin.r, margin.b], abs=1)
        finally:
            browser.close()


def test_a_slide_gets_back_the_margins_its_builder_set():
    """Slides scale the fonts and squeeze the figure: the page's estimate, scaled, would take
    the panels' room, so a slide starts from the builder's margins (automargin sizes them)."""
    from dashboard.presentation.slides import slide_figure

    figure = _bars()
    figure.update_layout(meta={"figure": "bars"})
    presize_margins(figure)
    assert figure.layout.margin.l > 10
    slide = slide_figure(json.loads(figure.to_json()), scale=1.0)
    assert {side: slide["layout"]["margin"][side] for side in "lrtb"} == \
        {"l": 10, "r": 20, "t": 40, "b": 30}
    assert slide["layout"]["meta"]["figure"] == "bars"  # the figure's own meta kept
