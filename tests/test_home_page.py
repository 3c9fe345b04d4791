"""Home's θ overview under AppTest: models sit in their own labelled lanes under the human
histogram (never at a made-up height on its '% of candidates' axis), on the same θ axis, and
the θ axis claims no N(0, 1) for the year's candidates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.page_support import decoded

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120


@pytest.fixture
def home(monkeypatch, pages_models_db) -> AppTest:
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    assert app.title[0].value.startswith("When an LLM passes ENEM")
    return app


def theta_figure(app: AppTest) -> dict:
    [figure] = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    return figure


def axis_key(reference: str, letter: str) -> str:
    """'y3' → 'yaxis3' (the layout key of a trace's axis)."""
    return f"{letter}axis{reference[1:]}"


def test_models_sit_in_their_own_lanes_under_the_histogram(home):
    figure = theta_figure(home)
    layout = figure["layout"]
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    models = [t for t in figure["data"] if t["type"] == "scatter"]
    assert len(bars) == 4 and models
    bar_axes = {t.get("yaxis", "y") for t in bars}
    lanes_of: dict[str, str] = {}
    for trace in models:
        # Each tick sits below its area's zero line, at the height whose tick label is the
        # model's own lane (its name without the tail every run shares): never on the
        # histogram's percentages, which are all above zero.
        [height] = set(decoded(trace["y"]))
        lane = layout[axis_key(trace.get("yaxis", "y"), "y")]
        assert height < 0 and trace.get("yaxis", "y") in bar_axes
        lane_name = lane["ticktext"][list(lane["tickvals"]).index(height)]
        assert trace["name"].startswith(lane_name), (trace["name"], lane_name)
        assert lanes_of.setdefault(trace["name"], lane_name) == lane_name
        # Same θ axis as the histogram of its area: one subplot holds both.
        bar_x = {t.get("xaxis", "x") for t in bars
                 if t.get("yaxis", "y") == trace.get("yaxis", "y")}
        assert bar_x == {trace.get("xaxis", "x")}
        assert np.isfinite(decoded(trace["x"])).all()
    names = {t["name"] for t in models}
    assert {"test-strong-it", "test-odd-base"} <= names
    assert len(set(lanes_of.values())) == len(lanes_of)  # one lane per series
    # Every area's axis keeps the bars' '% of candidates' title, and the bars stay above zero.
    for axis in bar_axes:
        assert "% of candidates" in layout[axis_key(axis, "y")]["title"]["text"], axis
        assert all(min(decoded(t["y"])) >= 0 for t in bars if t.get("yaxis", "y") == axis)


def test_the_theta_axis_claims_no_normal_distribution_for_the_year(home):
    layout = theta_figure(home)["layout"]
    titles = [value["title"]["text"] for key, value in layout.items()
              if key.startswith("xaxis") and isinstance(value, dict) and value.get("title")]
    assert titles and all(title.startswith("θ (ability, logits") for title in titles)
    assert not any("N(0" in title for title in titles), titles
    caption = " ".join(c.value for c in home.caption)
    assert "N(0, 1) of the scoring recipe is the prior" in caption
    assert "not this year's candidates" in caption
