"""The dashboard's pure helpers (contours, histogram percentiles, verdicts, model DI) and the
dashboard queries' handling of user input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics.contours import central_points, central_region, convex_hull
from analytics.ctt import discrimination_index
from dashboard.palette import model_styles
from dashboard.summaries import (
    histogram_percentile,
    histogram_quantile,
    information_verdict,
    informative_intervals,
    model_item_di,
)
from enem.trust import fit_verdict
from store.connection import open_reader
from store.data_queries import reject_sample, table_counts
from store.human_queries import human_theta_ctt
from store.item_queries import form_items, main_booklet
from store.model_queries import model_item_correct, model_pattern_matrix, model_points


def _inside(polygon_x, polygon_y, x, y) -> bool:
    """Point in (or on) a convex counter-clockwise polygon."""
    for i in range(len(polygon_x) - 1):
        cross = ((polygon_x[i + 1] - polygon_x[i]) * (y - polygon_y[i])
                 - (polygon_y[i + 1] - polygon_y[i]) * (x - polygon_x[i]))
        if cross < -1e-9:
            return False
    return True


def test_central_region_holds_ninety_percent_and_is_closed():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 200), rng.normal(20, 4, 200)
    region = central_region(x, y, 0.9)
    assert region is not None
    xs, ys = region
    assert xs[0] == xs[-1] and ys[0] == ys[-1]
    inside = sum(_inside(xs, ys, a, b) for a, b in zip(x, y, strict=True))
    assert 0.9 * 200 <= inside < 200
    assert len(central_points(x, y, 0.9)) == 180


def test_central_region_degenerate_clouds():
    assert central_region([], []) is None
    assert central_region([np.nan], [1.0]) is None
    _, ys = central_region([0.1, 0.2, 0.3, 0.4], [30, 30, 30, 30])
    assert set(ys) == {30.0}
    one = central_region([1.0], [2.0])
    assert list(one[0]) == [1.0, 1.0]
    with pytest.raises(ValueError):
        central_points([1.0], [1.0], 0.0)


def test_convex_hull_of_a_square_with_inner_points():
    points = [(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.5), (0.2, 0.7)]
    hull = convex_hull(points)
    assert {tuple(p) for p in hull} == {(0, 0), (1, 0), (1, 1), (0, 1)}


def test_histogram_percentile_and_quantile_invert_each_other():
    edges = np.arange(-3.0, 3.0, 0.1)
    rng = np.random.default_rng(0)
    sample = rng.normal(size=100_000)
    counts = np.histogram(sample, bins=np.append(edges, 3.0))[0]
    assert histogram_percentile(edges, counts, 0.1, [0.0])[0] == pytest.approx(50, abs=1)
    assert histogram_quantile(edges, counts, 0.1, 0.05) == pytest.approx(-1.645, abs=0.05)
    value = histogram_quantile(edges, counts, 0.1, 0.3)
    assert histogram_percentile(edges, counts, 0.1, [value])[0] == pytest.approx(30, abs=1e-6)
    assert histogram_percentile(edges, counts, 0.1, [-10, 10]).tolist() == [0.0, 100.0]
    assert np.isnan(histogram_quantile([], [], 0.1, 0.5))
    assert np.isnan(histogram_percentile([], [], 0.1, [0.0])[0])


def test_fit_verdict_flags_a_majority_below_the_human_fifth_percentile():
    assert fit_verdict([-5, -4, -3, 0.5], -1.6).untrusted
    verdict = fit_verdict([-5, 0, 0.3, 1.0], -1.6)
    assert verdict.share_below == 0.25 and not verdict.untrusted
    assert verdict.decided and not fit_verdict([-5.0], float("nan")).decided
    assert np.isnan(fit_verdict([], -1.6).share_below)


def test_information_intervals_and_verdicts():
    grid = np.linspace(-4, 4, 81)
    intervals = informative_intervals(grid, (grid > -1) & (grid < 2))
    assert intervals == [(pytest.approx(-0.9), pytest.approx(1.9))]
    assert informative_intervals(grid, np.zeros_like(grid, bool)) == []
    assert "measures well" in information_verdict(0.5, 0.1, 0.9, intervals, 0.2)
    assert "above the range" in information_verdict(3.0, 2.0, 4.0, intervals, 0.9)
    assert "below the range" in information_verdict(-3.0, -4, -2, intervals, 0.9)
    gaps = [(-2.0, -1.0), (1.0, 2.0)]
    assert "gap" in information_verdict(0.0, -0.5, 0.5, gaps, 1.0)
    assert "not informative anywhere" in information_verdict(0.0, -1, 1, [], 1.0)


def test_model_item_di_is_analytics_discrimination_index():
    rng = np.random.default_rng(5)
    theta = rng.normal(size=40)
    correct = (rng.random((40, 6)) < 1 / (1 + np.exp(-theta[:, None]))).astype(float)
    long = pd.DataFrame({
        "pattern": np.repeat([f"p{i:02d}" for i in range(40)], 6),
        "theta": np.repeat(theta, 6), "item_id": np.tile(np.arange(100, 106), 40),
        "correct": correct.reshape(-1),
    })
    di, patterns = model_item_di(long)
    assert patterns == 40
    np.testing.assert_allclose(di.to_numpy(), discrimination_index(correct, theta, 0.25))
    assert model_item_di(long.iloc[:0])[1] == 0


def test_model_styles_are_stable_and_distinct():
    styles = model_styles([f"m{i}" for i in range(10)])
    assert len(set(styles.values())) == 10
    assert model_styles(["b", "a"]) == model_styles(["a", "b"])


def test_queries_bind_user_input_as_values(pages_models_db):
    con = open_reader(pages_models_db)
    try:
        hostile = ["x'); DROP TABLE model_scores; --"]
        assert model_points(con, 2023, "CN", None, "pt", 0, hostile).empty
        assert human_theta_ctt(con, 2023, "CN' OR '1'='1", None, "all", "all").empty
        assert reject_sample(con, 2023, "' OR 1=1 --").empty
        assert con.execute("SELECT count(*) FROM model_scores").fetchall()[0][0] > 0
        with pytest.raises(ValueError):
            table_counts(con, ["scores; DROP TABLE scores"])
    finally:
        con.close()


def test_model_queries_agree_with_each_other(pages_models_db):
    con = open_reader(pages_models_db)
    try:
        models = ["test-strong-it", "test-odd-base", "test-random-baseline"]
        points = model_points(con, 2023, "LC", None, "en", 4, models)
        assert len(points) == 3 * 8
        long = model_pattern_matrix(con, 2023, "LC", None, "en", 4, models)
        assert long["pattern"].nunique() == 24
        assert long.groupby("pattern").size().eq(45).all(), "common and language items joined"
        cells = model_item_correct(con, 2023, "LC", "en", 4, models)
        total = cells.groupby("model")["correct"].sum().sort_index()
        ctt = points.groupby("model")["ctt"].sum().sort_index()
        pd.testing.assert_series_equal(total, ctt, check_names=False, check_dtype=False)
        assert main_booklet(con, 2023, "MT") is not None
        assert len(form_items(con, 2023, main_booklet(con, 2023, "LC"), 1)) == 45
    finally:
        con.close()
