"""The curve around a model's points: the contour of the highest-density region (HDR) holding 90%
of them, from a 2-D Gaussian KDE (Scott's bandwidth), with its fallbacks; checked against a
brute-force level, the coverage of fresh points, and on the Accuracy vs ability page against the
stored scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import gaussian_kde
from streamlit.testing.v1 import AppTest

from analytics.contours import (
    density_region,
    hdr_level,
    level_curves,
    principal_axis_density,
)
from dashboard.figures import humans_and_models_figure
from store.connection import open_reader
from tests.float_support import holds_the_coverage

ROOT = Path(__file__).resolve().parent.parent
COVARIANCE = np.array([[1.0, 0.6], [0.6, 2.0]])


def brute_force_level(density: np.ndarray, coverage: float) -> float:
    """The largest t among the densities at the points such that at least ``coverage`` of the
    points have density ≥ t (every candidate tried)."""
    best = -np.inf
    for t in density:
        if np.mean(density >= t) >= coverage - 1e-12 and t > best:
            best = t
    return float(best)


@pytest.mark.parametrize("n, seed", [(30, 1), (57, 2), (400, 3)])
def test_hdr_level_equals_brute_force(n, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(-1.0, 0.3, n), rng.normal(12.0, 3.0, n)
    density = gaussian_kde(np.vstack([x, y]))(np.vstack([x, y]))
    expected = brute_force_level(density, 0.9)
    region = density_region(x, y, 0.9)
    assert region.kind == "kde" and region.reason == ""
    assert region.level == pytest.approx(expected, rel=1e-12)
    assert hdr_level(density, 0.9) == pytest.approx(expected, rel=1e-12)
    # At least 90% of the points lie in the region, and no higher level would keep 90%. The
    # level and the points' densities come by two routes that may differ in the last bits (on
    # some CPUs they do): the comparison allows that much.
    assert holds_the_coverage(density, region.level, 0.9)


def test_grid_is_the_kde_and_the_contour_closes_inside_it():
    rng = np.random.default_rng(4)
    points = rng.multivariate_normal([0.0, 20.0], COVARIANCE, 60)
    region = density_region(points[:, 0], points[:, 1])
    kde = gaussian_kde(points.T)
    mesh_x, mesh_y = np.meshgrid(region.grid_x, region.grid_y)
    np.testing.assert_allclose(region.density,
                               kde(np.vstack([mesh_x.ravel(), mesh_y.ravel()]))
                               .reshape(mesh_x.shape), rtol=1e-10)
    # Scott's factor n^(-1/6) (d = 2): the default bandwidth.
    assert kde.factor == pytest.approx(60 ** (-1 / 6))
    edge = np.concatenate([region.density[0], region.density[-1], region.density[:, 0],
                           region.density[:, -1]])
    assert edge.max() < region.level, "the level set must not touch the grid's edge"
    assert region.grid_x[0] < points[:, 0].min() and region.grid_x[-1] > points[:, 0].max()


def test_region_covers_ninety_percent_of_fresh_points():
    rng = np.random.default_rng(2023)
    sample = rng.multivariate_normal([0.0, 0.0], COVARIANCE, 2000)
    region = density_region(sample[:, 0], sample[:, 1], 0.9)
    fresh = rng.multivariate_normal([0.0, 0.0], COVARIANCE, 40_000)
    coverage = region.contains(fresh[:, 0], fresh[:, 1]).mean()
    assert coverage == pytest.approx(0.9, abs=0.03)
    # The same share read off the drawn grid (nearest grid node), not from the estimate itself.
    column = np.clip(np.searchsorted(region.grid_x, fresh[:, 0]), 0, len(region.grid_x) - 1)
    row = np.clip(np.searchsorted(region.grid_y, fresh[:, 1]), 0, len(region.grid_y) - 1)
    assert (region.density[row, column] >= region.level).mean() == pytest.approx(0.9, abs=0.03)


def test_few_points_fall_back_to_the_hull():
    region = density_region([0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0])
    assert region.kind == "hull" and "only 4 points" in region.reason
    corners = set(zip(region.curve_x, region.curve_y, strict=True))
    assert corners == {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)}
    assert (region.curve_x[0], region.curve_y[0]) == (region.curve_x[-1], region.curve_y[-1])


def test_a_constant_coordinate_falls_back_to_the_hull():
    theta = np.linspace(-2.0, -1.0, 20)
    region = density_region(theta, np.full(20, 9.0))
    assert region.kind == "hull" and "one line" in region.reason
    assert set(region.curve_y) == {9.0}
    assert min(region.curve_x) >= -2.0 and max(region.curve_x) <= -1.0
    # Perfectly correlated points are singular too.
    diagonal = density_region(theta, 2 * theta + 1)
    assert diagonal.kind == "hull" and "one line" in diagonal.reason


@pytest.mark.parametrize("x, y", [([], []), ([1.0], [2.0]), ([1.0, 2.0], [2.0, 3.0]),
                                  ([1.0] * 9 + [2.0], [5.0] * 9 + [6.0]),
                                  ([np.nan, 1.0], [1.0, np.nan])])
def test_one_or_two_distinct_points_draw_nothing(x, y):
    region = density_region(x, y)
    assert region.kind == "none" and "no curve" in region.reason


def test_figure_draws_one_contour_at_the_level_and_names_fallbacks():
    rng = np.random.default_rng(7)
    cloud = rng.multivariate_normal([-1.0, 10.0], [[0.05, 0.2], [0.2, 4.0]], 30)
    points = pd.DataFrame({
        "model": ["cloud"] * 30 + ["few"] * 3, "area": "CN",
        "theta": np.r_[cloud[:, 0], -1.5, -1.2, -1.0], "ctt": np.r_[cloud[:, 1], 5, 8, 6],
        "run_id": 1, "prompt_language": "pt", "shots": 0, "shuffle": np.arange(33),
        "theta_se": 0.3, "lz": 0.0,
    })
    figure, notes = humans_and_models_figure(["CN"], {}, points, y="ctt", y_bin="ctt",
                                             y_width=1.0, y_title="CTT", y_label="CTT",
                                             catalogue=["cloud", "few"])
    lines = [t for t in figure.data if t.type == "scatter" and t.mode == "lines"]
    [contour] = [t for t in lines if t.line.dash is None]
    assert contour.name.startswith("cloud") and contour.hoverinfo == "skip"
    kde = gaussian_kde(cloud.T)
    expected = brute_force_level(kde(cloud.T), 0.9)
    assert contour.meta["hdr_level"] == pytest.approx(expected)
    # The line drawn is where the density equals that level (to the grid's interpolation).
    x, y = np.asarray(contour.x, float), np.asarray(contour.y, float)
    on_line = np.isfinite(x)
    assert on_line.sum() > 20
    np.testing.assert_allclose(kde(np.vstack([x[on_line], y[on_line]])), expected, rtol=0.03)
    assert notes == [("few (CN): only 3 points: convex hull of the central 90% instead of a "
                      "density contour")]
    hull = [t for t in lines if t.line.dash == "dash"]
    assert len(hull) == 1


def test_accuracy_page_draws_the_hdr_of_each_run(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.switch_page("pages/Accuracy_vs_ability.py").run()
    assert not app.exception
    figure = json.loads(app.get("plotly_chart")[0].proto.spec)
    contours = {(trace["xaxis"], trace["name"].split(": ")[0]): trace["meta"]["hdr_level"]
                for trace in figure["data"]
                if trace["type"] == "scatter" and "highest-density" in trace["name"]}
    con = open_reader(pages_models_db)
    try:
        checked = 0
        for axis, area in (("x", "CN"), ("x4", "MT")):
            series = con.execute(
                """SELECT coalesce(r.label, r.model_id) AS model, list(m.theta), list(m.ctt)
                   FROM model_scores m JOIN model_runs r USING (run_id)
                   WHERE m.year = 2023 AND m.area = ? AND m.prompt_language = 'pt'
                     AND (m.shots = 0 OR m.shots IS NULL) GROUP BY 1""", [area]).fetchall()
            for model, theta, ctt in series:
                data = np.vstack([np.asarray(theta, float), np.asarray(ctt, float)])
                expected = brute_force_level(gaussian_kde(data)(data), 0.9)
                assert contours[(axis, model)] == pytest.approx(expected, rel=1e-9), model
                checked += 1
    finally:
        con.close()
    assert checked >= 6
    caption = " ".join(c.value for c in app.caption)
    assert ("the line encloses the highest-density region holding 90% of the run's "
            "repetitions, from a Gaussian KDE (Scott's bandwidth)") in caption


def test_level_curves_trace_a_known_circle_and_separate_pieces():
    grid = np.linspace(-2, 2, 161)
    mesh_x, mesh_y = np.meshgrid(grid, grid)
    x, y = level_curves(grid, grid, mesh_x ** 2 + mesh_y ** 2, 1.0)
    assert np.isfinite(x).all() and len(x) > 100
    np.testing.assert_allclose(np.hypot(x, y), 1.0, atol=1e-3)
    # Two bumps crossing the level: two lines, divided by NaN.
    bumps = np.exp(-((mesh_x - 1) ** 2 + mesh_y ** 2) * 8) + np.exp(
        -((mesh_x + 1) ** 2 + mesh_y ** 2) * 8)
    x, y = level_curves(grid, grid, bumps, 0.5)
    finite = x[np.isfinite(x)]
    assert np.isnan(x).sum() == 1 and (finite > 0).any() and (finite < 0).any()
    assert level_curves(grid, grid, bumps, 5.0)[0].size == 0


def test_the_principal_axis_grid_holds_scipys_density_at_its_nodes():
    rng = np.random.default_rng(11)
    points = rng.multivariate_normal([-0.5, 20.0], [[0.3, 1.1], [1.1, 9.0]], 80)
    kde = gaussian_kde(points.T)
    s, t, density, origin, axes = principal_axis_density(kde, grid_points=40)
    assert density.shape == (40, 40)
    mesh_s, mesh_t = np.meshgrid(s, t)
    nodes = origin[:, None] + axes @ np.vstack([mesh_s.ravel(), mesh_t.ravel()])
    np.testing.assert_allclose(density, kde(nodes).reshape(density.shape), rtol=1e-9,
                               atol=1e-15)
    # The axes are orthonormal and the grid holds every point with room to spare.
    np.testing.assert_allclose(axes.T @ axes, np.eye(2), atol=1e-12)
    projected = axes.T @ (points.T - origin[:, None])
    assert s[0] < projected[0].min() and s[-1] > projected[0].max()
    assert t[0] < projected[1].min() and t[-1] > projected[1].max()


def test_a_strongly_correlated_cloud_is_traced_at_its_level():
    rng = np.random.default_rng(12)
    points = rng.multivariate_normal([0.0, 25.0], [[0.2, 1.9], [1.9, 20.0]], 300)
    region = density_region(points[:, 0], points[:, 1])
    assert region.kind == "kde"
    on_line = np.isfinite(region.curve_x)
    assert on_line.sum() > 50
    drawn = region.kde(np.vstack([region.curve_x[on_line], region.curve_y[on_line]]))
    np.testing.assert_allclose(drawn, region.level, rtol=0.02)
