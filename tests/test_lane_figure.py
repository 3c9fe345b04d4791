"""Histograms with model lanes (Home's θ, Person fit's l_z): models never sit on the humans'
'% of candidates' axis, shares are the humans' own, references cross both panels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from plotly.subplots import make_subplots

from dashboard.figures import reference_line
from dashboard.lane_figure import histogram_with_lanes
from tests.page_support import assert_clean, decoded, run_page


def _points(models: list[str], areas: list[str]) -> pd.DataFrame:
    rows = [{"area": area, "model": model, "run_id": "r", "shuffle": s, "theta": 0.1 * s,
             "theta_se": 0.3, "lz": -0.5 * s, "ctt": s} for area in areas
            for model in models for s in range(3)]
    return pd.DataFrame(rows)


def test_bars_are_shares_and_models_sit_in_lanes():
    histograms = {"CN": pd.DataFrame({"bin": [-0.2, -0.1, 0.0], "n": [1, 3, 6]}),
                  "MT": pd.DataFrame(columns=["bin", "n"])}
    points = _points(["alpha · 0-shot", "beta · 0-shot"], ["CN", "MT"])
    figure, table = histogram_with_lanes(
        ["CN", "MT"], histograms, points, "lz", bin_width=0.1,
        styles={"alpha · 0-shot": ("#000000", "circle"), "beta · 0-shot": ("#111111", "circle")},
        x_title="l_z", human_label="humans", lane_names={"alpha · 0-shot": "alpha"},
        references={"CN": -1.5, "MT": -1.2}, reference_name="p5")
    bars = [t for t in figure.data if t.type == "bar"]
    assert len(bars) == 1 and np.allclose(bars[0].y, [10.0, 30.0, 60.0])
    assert np.allclose(bars[0].x, [-0.15, -0.05, 0.05])
    lanes = [t for t in figure.data if t.type == "scatter"]
    assert {t.name for t in lanes} == {"alpha · 0-shot", "beta · 0-shot"}
    assert {tuple(set(t.y)) for t in lanes} == {("alpha",), ("beta · 0-shot",)}
    assert not {t.yaxis for t in lanes} & {b.yaxis for b in bars}
    # Two dashed lines per area (histogram and lanes), at the reference.
    xs = sorted(shape.x0 for shape in figure.layout.shapes)
    assert xs == [-1.5, -1.5, -1.2, -1.2]
    # Each line spans its own panel (rows: CN histogram, CN lanes, gap, MT histogram, MT
    # lanes), from the panel's bottom to its top; the label sits in the histogram panel.
    def refs(row: int) -> tuple[str, str]:
        subplot = figure.get_subplot(row, 1)
        return (subplot.xaxis.plotly_name.replace("axis", ""),
                subplot.yaxis.plotly_name.replace("axis", "") + " domain")
    drawn = {(shape.x0, shape.xref, shape.yref, shape.y0, shape.y1)
             for shape in figure.layout.shapes}
    assert drawn == {(x, *refs(row), 0, 1) for x, rows in ((-1.5, (1, 2)), (-1.2, (4, 5)))
                     for row in rows}
    labels = {(a.x, a.xref, a.yref) for a in figure.layout.annotations if a.text == "p5"}
    assert labels == {(-1.5, *refs(1)), (-1.2, *refs(4))}
    assert set(table["kind"]) == {"humans", "model"}
    notes = [a.text for a in figure.layout.annotations]
    assert "no scored candidates in MT" in notes


def test_person_fit_reference_draws_models_in_lanes(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page("pages/Person_fit.py", {"area": "MT"})
    assert_clean(app)
    figure = json.loads(app.get("plotly_chart")[1].proto.spec)
    layout = figure["layout"]
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    lanes = [t for t in figure["data"] if t["type"] == "scatter"]
    bar_axis = bars[0].get("yaxis", "y")
    title = layout["yaxis" + bar_axis[1:]]["title"]["text"]
    assert "% of candidates" in title
    assert lanes and all(t.get("yaxis", "y") != bar_axis for t in lanes)
    assert abs(float(np.sum(decoded(bars[0]["y"]))) - 100.0) < 1e-9


def test_a_horizontal_reference_spans_only_its_panel():
    figure = make_subplots(rows=2, cols=2)
    reference_line(figure, 2, 2, y=-1.5, line={"dash": "dash"}, label="p5")
    [shape] = figure.layout.shapes
    assert (shape.xref, shape.x0, shape.x1) == ("x4 domain", 0, 1)
    assert (shape.yref, shape.y0, shape.y1) == ("y4", -1.5, -1.5)
    [label] = figure.layout.annotations
    assert (label.text, label.xref, label.x, label.yref, label.y) == ("p5", "x4 domain", 0, "y4",
                                                                      -1.5)
    assert (label.xanchor, label.yanchor) == ("left", "top")  # inside the panel, under the line
    with pytest.raises(ValueError, match="exactly one"):
        reference_line(figure, 1, 1, line={})
