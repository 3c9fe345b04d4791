"""The variable-length study (stop once SE(θ̂) falls below a target, at most 20 items) and the
guess/slip chart's robust statistic, against brute force on the fixed-length paths and the
simulation the command and the page run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import ItemBank, QuadratureGrid
from analytics.cat import (
    CatEAP,
    CatML,
    FixedLength,
    MaxInformation,
    median_by_step,
    noise_curves,
    simulate_cat,
    variable_length_study,
)
from cli.main import main
from tests.page_support import assert_clean, charts, decoded, run_page
from workflows.cat.simulation import SE_TARGETS, load_area_bank

PAGE = "pages/Adaptive_testing.py"


def _bank(n_items: int = 90, seed: int = 3) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.3, 0.3, n_items), rng.normal(0.5, 1.2, n_items),
                                rng.uniform(0.05, 0.25, n_items))


def _by_brute_force(free, theta0: np.ndarray, target: float, max_items: int) -> dict:
    """Each simulee's test read off its fixed-length path: it stops at the first step whose SE
    is below the target, or at max_items; its final θ̂ is the path's θ̂ there."""
    lengths, errors, reached = [], [], []
    for i in range(theta0.shape[0]):
        stop = max_items
        for t in range(1, max_items + 1):
            if free.se[i, t] < target:
                stop = t
                break
        lengths.append(stop)
        errors.append((free.theta[i, stop] - theta0[i]) ** 2)
        reached.append(free.se[i, stop] < target)
    return {"mean_items": np.mean(lengths), "median_items": np.median(lengths),
            "reached": np.mean(reached), "mse": np.mean(errors)}


def test_variable_length_study_equals_the_fixed_length_paths_cut_by_hand():
    bank = _bank()
    theta0 = np.random.default_rng(8).normal(size=300)
    estimator = CatEAP()
    targets = [0.3, 0.4, 0.55]
    study = variable_length_study(bank, theta0, estimator, targets, max_items=20, seed=4)
    free = simulate_cat(bank, theta0, MaxInformation(), estimator, FixedLength(20), seed=4)
    np.testing.assert_array_equal(study["se_target"], targets)
    for row, target in enumerate(targets):
        expected = _by_brute_force(free, theta0, target, 20)
        for column, value in expected.items():
            assert study[column][row] == pytest.approx(value, rel=1e-12), column
    # A looser target stops sooner and costs accuracy.
    assert np.all(np.diff(study["mean_items"]) < 0) and np.all(np.diff(study["mse"]) > 0)


def test_noise_curves_are_medians_by_step():
    bank = _bank()
    theta0 = np.random.default_rng(2).normal(size=150)
    curves = noise_curves(bank, theta0, MaxInformation(), CatML(), [(0.2, 0.1)], max_items=8,
                          seed=6)
    paths = simulate_cat(bank, theta0, MaxInformation(), CatML(), FixedLength(8), seed=6,
                         guess=0.2, slip=0.1)
    for step in range(1, 9):
        assert curves[(0.2, 0.1)][step] == pytest.approx(sorted(paths.se[:, step])[74] / 2
                                                         + sorted(paths.se[:, step])[75] / 2)
    # An infinite SE (no information yet) counts as the largest value, not as missing.
    values = np.array([[np.inf, 1.0, 0.5], [np.inf, np.inf, 0.4], [np.inf, np.inf, 0.3]])
    median = median_by_step(values)
    assert np.isnan(median[0]) and median[1] == np.inf and median[2] == 0.4


def test_cat_simulate_with_an_se_target_prints_the_variable_length_test(ingested_2023,
                                                                        capsys):
    db = ingested_2023[0]
    assert main(["cat-simulate", "--db", str(db), "--area", "CN", "--se-target", "0.4",
                 "--simulees", "200", "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    bank = load_area_bank(db, "CN")
    theta0 = np.random.default_rng([3, 1]).normal(0.0, 1.0, 200)
    estimator = CatEAP(grid=QuadratureGrid(121, (-6.0, 6.0)))
    free = simulate_cat(bank.bank, theta0, MaxInformation(), estimator, FixedLength(20), seed=3)
    expected = _by_brute_force(free, theta0, 0.4, 20)
    line = next(line for line in printed.splitlines() if line.startswith("variable length"))
    assert f"{expected['mean_items']:.1f} items on average" in line
    assert f"MSE {expected['mse']:.3f}" in line
    assert f"{100 * expected['reached']:.0f}% reached SE < 0.4" in line


def test_page_draws_the_variable_length_study_and_a_readable_noise_chart(monkeypatch,
                                                                          pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page(PAGE)
    assert_clean(app)
    app.selectbox(key="cat.area").set_value("CN").run()
    figures = {f["layout"]["title"]["text"]: f for f in charts(app)}
    [variable] = [f for t, f in figures.items() if "variable length" in t.lower()]
    bank = load_area_bank(pages_demo_db, "CN", [2023])
    theta0 = np.random.default_rng([0, 1]).normal(0.0, 1.0, 100)
    estimator = CatEAP(grid=QuadratureGrid(121, (-6.0, 6.0)))
    free = simulate_cat(bank.bank, theta0, MaxInformation(), estimator, FixedLength(20), seed=0)
    points = next(trace for trace in variable["data"] if trace["name"].startswith("SE <"))
    expected = pd.DataFrame([_by_brute_force(free, theta0, t, 20) for t in SE_TARGETS])
    np.testing.assert_allclose(decoded(points["x"]), expected["mean_items"], rtol=1e-12)
    np.testing.assert_allclose(decoded(points["y"]), expected["mse"], rtol=1e-12)
    [table] = [f.value for f in app.dataframe if "SE target" in f.value]
    np.testing.assert_allclose(table["SE target"], SE_TARGETS)
    np.testing.assert_allclose(table["final MSE"], expected["mse"], rtol=1e-12)

    [noise] = [f for t, f in figures.items() if "guess/slip" in t]
    assert noise["layout"]["yaxis"].get("type", "linear") == "linear"
    assert "median" in noise["layout"]["yaxis"]["title"]["text"]
    grey = [trace for trace in noise["data"] if "guess 0.1, slip 0.3" in trace["hovertemplate"]]
    paths = simulate_cat(bank.bank, theta0, MaxInformation(), estimator, FixedLength(20), seed=0,
                         guess=0.1, slip=0.3)
    np.testing.assert_allclose(decoded(grey[0]["y"]), np.median(paths.se[:, 1:], axis=0),
                               rtol=1e-12)
    captions = " ".join(c.value for c in app.caption)
    assert "median SE" in captions and "logits" in captions
