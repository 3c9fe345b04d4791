"""Histograms with model lanes (Home's θ, Person fit's l_z): models never sit on the humans'
percentages (their lanes are under the zero line), shares are the humans' own, references
cross bars and lanes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from plotly.subplots import make_subplots

from dashboard.figures import reference_line
from dashboard.lane_figure import HISTOGRAM_PX, LANE_PX, histogram_with_lanes
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
    # One subplot per area: the lanes sit under the zero line of the bars' axis, each at the
    # height its tick names, never on the bars' percentages.
    for lane in lanes:
        axis = figure.layout["yaxis" + (lane.yaxis or "y")[1:]]
        [height] = set(lane.y)
        assert height < 0 and axis.range[0] < height
        label = axis.ticktext[list(axis.tickvals).index(height)]
        assert label == ("alpha" if lane.name.startswith("alpha") else "beta · 0-shot")
    cn_axis = figure.layout["yaxis" + (bars[0].yaxis or "y")[1:]]
    assert cn_axis.range[1] >= 60.0
    assert {lane.yaxis for lane in lanes} == {"y", "y2"}
    # One dashed line per area, across its whole subplot (bars and lanes).
    def refs(row: int) -> tuple[str, str]:
        subplot = figure.get_subplot(row, 1)
        return (subplot.xaxis.plotly_name.replace("axis", ""),
                subplot.yaxis.plotly_name.replace("axis", "") + " domain")
    drawn = {(shape.x0, shape.xref, shape.yref, shape.y0, shape.y1)
             for shape in figure.layout.shapes}
    assert drawn == {(-1.5, *refs(1), 0, 1), (-1.2, *refs(2), 0, 1)}
    labels = {(a.x, a.xref, a.yref) for a in figure.layout.annotations if a.text == "p5"}
    assert labels == {(-1.5, *refs(1)), (-1.2, *refs(2))}
    assert set(table["kind"]) == {"humans", "model"}
    notes = [a.text for a in figure.layout.annotations]
    assert "no scored candidates in MT" in notes
    # The bars' axis title where there are bars (CN), none over MT's empty histogram.
    assert figure.layout.yaxis.title.text == "% of candidates per 0.1 (bars)"
    assert not figure.layout.yaxis2.title.text


def test_lanes_keep_their_pixels_whatever_the_bars_height():
    """A lane is LANE_PX high and the bars HISTOGRAM_PX, in an area of tall or flat bars."""
    histograms = {"CN": pd.DataFrame({"bin": [0.0, 0.1], "n": [1, 99]}),
                  "MT": pd.DataFrame({"bin": np.arange(50) / 10, "n": np.ones(50)})}
    points = _points(["alpha", "beta", "gamma"], ["CN", "MT"])
    figure, _ = histogram_with_lanes(
        ["CN", "MT"], histograms, points, "lz", bin_width=0.1,
        styles={m: ("#000000", "circle") for m in ("alpha", "beta", "gamma")},
        x_title="l_z", human_label="humans")
    plot_px = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    for axis in (figure.layout.yaxis, figure.layout.yaxis2):
        low, high = axis.range
        px_per_unit = (axis.domain[1] - axis.domain[0]) * plot_px / (high - low)
        assert abs(high * px_per_unit - HISTOGRAM_PX) < 1e-6
        lanes = sorted(v for v in axis.tickvals if v < 0)
        assert np.allclose(np.diff(lanes) * px_per_unit, LANE_PX)


def test_person_fit_reference_draws_models_in_lanes(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page("pages/Person_fit.py", {"area": "MT"})
    assert_clean(app)
    figure = json.loads(app.get("plotly_chart")[1].proto.spec)
    layout = figure["layout"]
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    lanes = [t for t in figure["data"] if t["type"] == "scatter" and t.get("mode") == "markers"]
    bar_axis = bars[0].get("yaxis", "y")
    assert "% of candidates" in layout["yaxis" + bar_axis[1:]]["title"]["text"]
    assert lanes and all(t.get("yaxis", "y") == bar_axis for t in lanes)
    assert all(max(decoded(t["y"])) < 0 for t in lanes)
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
