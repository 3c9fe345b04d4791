"""Test information page, model rows (the paper's Fig. 4, "IRT scores, 95% CI"): per model the
spread of θ over repetitions (5th–95th percentile) and the 95% CI of its mean θ
(mean ± 1.96·SD/√n), checked against numpy on the stored ``model_scores``."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.information_data import theta_intervals

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/4_Test_information.py"


def stored_theta(db: Path) -> dict[tuple[str, str], np.ndarray]:
    """θ of every pt, 0-shot repetition of 2023 per (series, area), straight from the store."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            """SELECT coalesce(r.label, r.model_id), m.area, list(m.theta)
               FROM model_scores m JOIN model_runs r USING (run_id)
               WHERE m.year = 2023 AND m.prompt_language = 'pt'
                 AND (m.shots = 0 OR m.shots IS NULL) AND m.theta IS NOT NULL
               GROUP BY ALL""").fetchall()
    finally:
        con.close()
    return {(model, area): np.asarray(theta, float) for model, area, theta in rows}


def numpy_summary(theta: np.ndarray) -> dict[str, float]:
    """p5, p95, mean and the 95% CI of the mean (1.96·SD/√n, SD with ddof 1)."""
    half = 1.96 * np.std(theta, ddof=1) / np.sqrt(len(theta))
    return {"p5": np.percentile(theta, 5), "p95": np.percentile(theta, 95),
            "mean_theta": theta.mean(), "ci_low": theta.mean() - half,
            "ci_high": theta.mean() + half}


def test_theta_intervals_match_numpy():
    rng = np.random.default_rng(11)
    a, b = rng.normal(-1.2, 0.4, 30), rng.normal(0.5, 0.1, 7)
    points = pd.DataFrame({"model": ["a"] * 30 + ["b"] * 7 + ["c"], "area": "MT",
                           "theta": np.r_[a, b, 0.25]})
    points.loc[3, "theta"] = np.nan          # a missing θ is not a repetition
    table = theta_intervals(points).set_index("model")
    for name, theta in (("a", np.delete(a, 3)), ("b", b)):
        expected = numpy_summary(theta)
        assert table.loc[name, "repetitions"] == len(theta)
        for column, value in expected.items():
            assert table.loc[name, column] == pytest.approx(value, rel=1e-12), (name, column)
    single = table.loc["c"]
    assert single["repetitions"] == 1 and single["p5"] == single["p95"] == 0.25
    assert np.isnan(single["ci_low"]) and np.isnan(single["ci_high"])
    assert theta_intervals(points.iloc[:0]).empty


@pytest.fixture
def information_app(monkeypatch, pages_models_db) -> AppTest:
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.switch_page(PAGE).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_page_draws_spread_and_ci_from_model_scores(information_app, pages_models_db):
    stored = stored_theta(pages_models_db)
    table = information_app.dataframe[0].value.set_index(["model", "area"])
    assert len(table) == len(stored) and len(stored) >= 12
    figure = json.loads(information_app.get("plotly_chart")[0].proto.spec)
    spreads = [trace for trace in figure["data"]
               if trace["name"].endswith(": spread over repetitions (5th–95th percentile)")]
    means = [trace for trace in figure["data"] if "error_x" in trace
             and trace.get("legendgroup") not in ("ci", None)]
    assert len(spreads) == len(means) == len(stored)
    for (model, area), theta in stored.items():
        expected = numpy_summary(theta)
        row = table.loc[(model, area)]
        assert row["repetitions"] == len(theta)
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-9, abs=1e-12), (model, area, column)
    # Figure: per (model, area) one spread bar and one mean with its CI whiskers; match them
    # to the stored numbers by their x values.
    drawn_spreads = {(round(t["x"][0], 9), round(t["x"][1], 9)) for t in spreads}
    drawn_means = {(round(t["x"][0], 9), round(t["x"][0] - t["error_x"]["arrayminus"][0], 9),
                    round(t["x"][0] + t["error_x"]["array"][0], 9)) for t in means}
    for theta in stored.values():
        expected = numpy_summary(theta)
        assert (round(expected["p5"], 9), round(expected["p95"], 9)) in drawn_spreads
        assert (round(expected["mean_theta"], 9), round(expected["ci_low"], 9),
                round(expected["ci_high"], 9)) in drawn_means


def test_caption_and_legend_name_both_intervals(information_app):
    figure = json.loads(information_app.get("plotly_chart")[0].proto.spec)
    legend = {t["name"] for t in figure["data"] if t.get("showlegend", True)}
    assert "spread over repetitions (5th–95th percentile)" in legend
    assert "mean θ, 95% CI (IRT scores, 95% CI)" in legend
    captions = " ".join(c.value for c in information_app.caption)
    assert "5th–95th percentile" in captions
    assert "mean ± 1.96·SD/√n" in captions and "IRT scores, 95% CI" in captions
    assert "root-mean-square" not in captions


def test_panel_and_model_rows_share_an_axis_and_columns_keep_apart(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    # Short run names: two columns of panels.
    for key, value in {"model": ["test-strong-it", "test-odd-base"]}.items():
        app.query_params[key] = value
    app.switch_page(PAGE).run()
    assert not app.exception
    figure = json.loads(app.get("plotly_chart")[0].proto.spec)
    layout = figure["layout"]
    height = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    axes = {key: value for key, value in layout.items() if key.startswith("yaxis")}
    # Per column: the information panel sits right above its model rows (a narrow gap), and
    # the gap between two blocks is wide enough for an axis title and the next panel titles.
    def x_start(yaxis: dict) -> float:
        return layout["xaxis" + yaxis["anchor"][1:]]["domain"][0]

    first_column = sorted((tuple(v["domain"]) for v in axes.values()
                           if "overlaying" not in v and x_start(v) == 0 and v.get("visible", True)),
                          reverse=True)
    gaps = [upper[0] - lower[1] for upper, lower in pairwise(first_column)]
    assert any(g * height <= 20 for g in gaps) and any(g * height >= 100 for g in gaps)
    # Two columns: the right-hand SE axis title of one has room before the next's I(θ) title.
    starts = sorted({tuple(v["domain"]) for k, v in layout.items()
                     if k.startswith("xaxis") and v.get("visible", True)})
    assert len(starts) == 2 and starts[1][0] - starts[0][1] >= 0.15
