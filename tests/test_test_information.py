"""Test information page, model rows (the paper's Fig. 4, "IRT scores, 95% CI"): three 95%
intervals around each model's θ — the bootstrap CI of the mean over repetitions, the central 95%
of the repetitions' θ, and each pattern's own SE(θ) — computed by hand and with scipy, drawn
as the picker says, and named exactly in the caption."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from dashboard.information.intervals import theta_intervals
from store.connection import open_reader

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/Test_information.py"
AMBIGUITY = ("its text does not settle whether that is the CI of the mean or the central 95% of "
             "the shuffles' θ, and neither includes a pattern's own SE(θ)")


def stored_patterns(db: Path) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """(θ, SE) of every pt, 0-shot repetition of 2023 per (series, area), from the store."""
    con = open_reader(db)
    try:
        rows = con.execute(
            """SELECT coalesce(r.label, r.model_id), m.area, list(m.theta ORDER BY m.run_id,
                      m.shuffle), list(m.theta_se ORDER BY m.run_id, m.shuffle)
               FROM model_scores m JOIN model_runs r USING (run_id)
               WHERE m.year = 2023 AND m.prompt_language = 'pt' AND m.shots = 0
                 AND m.theta IS NOT NULL
               GROUP BY ALL""").fetchall()
    finally:
        con.close()
    return {(model, area): (np.asarray(theta, float), np.asarray(se, float))
            for model, area, theta, se in rows}


def by_hand(theta: np.ndarray, se: np.ndarray) -> dict[str, float]:
    """The three intervals written out: 1,000 bootstrap resamples of the repetitions drawn with
    a fresh default_rng(0) (indices one resample per row), their means' 2.5th and 97.5th
    percentiles; the 2.5th and 97.5th percentiles of θ (scipy); mean θ ± 1.96 · mean SE."""
    rng = np.random.default_rng(0)
    means = [theta[row].mean() for row in rng.integers(0, len(theta), (1000, len(theta)))]
    central = stats.scoreatpercentile(theta, [2.5, 97.5])
    return {"mean_theta": theta.mean(),
            "boot_low": np.percentile(means, 2.5), "boot_high": np.percentile(means, 97.5),
            "central_low": central[0], "central_high": central[1],
            "se_low": theta.mean() - 1.96 * se.mean(), "se_high": theta.mean() + 1.96 * se.mean()}


def test_three_intervals_match_hand_computations_and_scipy():
    rng = np.random.default_rng(11)
    a, b = rng.normal(-1.2, 0.4, 30), rng.normal(0.5, 0.1, 7)
    points = pd.DataFrame({"model": ["a"] * 30 + ["b"] * 7 + ["c"], "area": "MT",
                           "theta": np.r_[a, b, 0.25],
                           "theta_se": np.r_[rng.uniform(0.2, 0.5, 37), 0.3]})
    points.loc[3, "theta"] = np.nan          # a missing θ is not a repetition
    table = theta_intervals(points).set_index("model")
    for name, rows in (("a", points.iloc[:30].drop(index=3)), ("b", points.iloc[30:37])):
        theta, se = rows["theta"].to_numpy(), rows["theta_se"].to_numpy()
        assert table.loc[name, "repetitions"] == len(theta)
        for column, value in by_hand(theta, se).items():
            assert table.loc[name, column] == pytest.approx(value, rel=1e-12), (name, column)
        # The bootstrap CI of the mean agrees with scipy's percentile bootstrap (another
        # generator, 20,000 resamples) to within the resampling noise, and is much narrower
        # than the central 95% of the repetitions.
        reference = stats.bootstrap((theta,), np.mean, method="percentile", n_resamples=20_000,
                                    random_state=np.random.default_rng(5)).confidence_interval
        sd = theta.std(ddof=1)
        assert table.loc[name, "boot_low"] == pytest.approx(reference.low, abs=0.06 * sd)
        assert table.loc[name, "boot_high"] == pytest.approx(reference.high, abs=0.06 * sd)
        assert (table.loc[name, "boot_high"] - table.loc[name, "boot_low"]
                < 0.6 * (table.loc[name, "central_high"] - table.loc[name, "central_low"]))
    single = table.loc["c"]
    assert single["repetitions"] == 1 and single["central_low"] == single["central_high"] == 0.25
    assert np.isnan(single["boot_low"]) and np.isnan(single["boot_high"])
    assert single["se_low"] == pytest.approx(0.25 - 1.96 * 0.3)
    assert theta_intervals(points.iloc[:0]).empty


@pytest.fixture
def information_app(monkeypatch, pages_models_db) -> AppTest:
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.switch_page(PAGE).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.mark.parametrize("choice, low, high, words", [
    ("bootstrap", "boot_low", "boot_high", ("95% confidence interval of its mean θ over its "
     "repetitions (percentile bootstrap, 1,000 resamples")),
    ("central", "central_low", "central_high", ("central 95% of its repetitions' θ (their 2.5th "
     "to 97.5th percentile)")),
    ("pattern_se", "se_low", "se_high", "each repetition's own 95% interval θ ± 1.96·SE(θ)"),
])
def test_page_draws_the_chosen_interval_and_its_caption_names_it(information_app,
                                                                 pages_models_db, choice, low,
                                                                 high, words):
    app = information_app
    if choice != "bootstrap":  # the default
        app.radio(key="information.interval").set_value(choice).run()
        assert not app.exception
    stored = stored_patterns(pages_models_db)
    table = app.dataframe[0].value.set_index(["model", "area"])
    assert len(table) == len(stored) and len(stored) >= 12
    figure = json.loads(app.get("plotly_chart")[0].proto.spec)
    means = [trace for trace in figure["data"] if trace.get("error_x", {}).get("type") == "data"
             and len(trace["x"]) == 1 and trace.get("legendgroup") not in ("ci", None)]
    assert len(means) == len(stored)
    drawn = {(round(t["x"][0], 9), round(t["x"][0] - t["error_x"]["arrayminus"][0], 9),
              round(t["x"][0] + t["error_x"]["array"][0], 9)) for t in means}
    for (model, area), (theta, se) in stored.items():
        expected = by_hand(theta, se)
        row = table.loc[(model, area)]
        assert row["repetitions"] == len(theta)
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-9, abs=1e-12), (model, area, column)
        assert (round(expected["mean_theta"], 9), round(expected[low], 9),
                round(expected[high], 9)) in drawn
    own = [t for t in figure["data"] if t["name"].endswith(": θ of each repetition")]
    assert own and all(("error_x" in t and t["error_x"].get("array") is not None)
                       is (choice == "pattern_se") for t in own)
    captions = " ".join(c.value for c in app.caption)
    assert words in captions and AMBIGUITY in captions
    legend = {t["name"] for t in figure["data"] if t.get("showlegend", True)}
    assert any(name.startswith("mean θ, ") for name in legend)
    assert "5th–95th" not in captions and "SD/√n" not in captions


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
