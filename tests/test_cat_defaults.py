"""The adaptive-testing defaults on INEP's real item banks (issue 23, point 2): with no flags,
``cat-simulate`` on the real 2022 CN bank gives an MSE that falls with the test length, ≤ 0.35
after 20 items and below random fixed forms of every length up to 20, as the CAT seed's Fig. 4a
shows; the Adaptive testing page draws the same numbers, on a bank of one year or several."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.ability import EAPEstimator, QuadratureGrid
from analytics.cat import CatSettings
from cli.main import main
from store.layout import copy_store
from tests.page_support import assert_clean, charts, decoded, run_page
from workflows.cat.simulation import load_area_bank

PAGE = "pages/Adaptive_testing.py"


@pytest.fixture(scope="module")
def real_store(tmp_path_factory, real_items_db):
    """A copy of the store holding INEP's real item files of 2019–2022 (items only)."""
    path = tmp_path_factory.mktemp("cat_real") / "real.duckdb"
    copy_store(real_items_db, path)
    return path


def _simulate(db, tmp_path, *arguments: str) -> tuple[pd.DataFrame, str]:
    output = tmp_path / "mse.csv"
    assert main(["cat-simulate", "--db", str(db), *arguments, "--output", str(output)]) == 0
    return pd.read_csv(output), str(output)


def test_cat_simulate_defaults_on_the_real_2022_cn_bank(real_store, tmp_path, capsys):
    table, _ = _simulate(real_store, tmp_path, "--area", "CN", "--years", "2022")
    printed = capsys.readouterr().out
    cat = table["mse_cat"].to_numpy()[:20]
    random = table["mse_random"].to_numpy()
    assert cat[19] <= 0.35
    # Below random fixed forms of the same length at every length the CAT has.
    assert np.all(cat < random[:20])
    # Falling with the length: every 5-item stretch ends lower than it began, and no step
    # rises by more than a hundredth (sampling noise of 100 simulees).
    assert cat[0] > cat[4] > cat[9] > cat[14] > cat[19]
    assert np.all(np.diff(cat) < 0.01)
    # The summary says in words what the MSE and the lengths mean.
    assert f"{cat[19]:.3f}" in printed and "root mean square" in printed
    assert f"{math.sqrt(cat[19]):.2f}" in printed
    assert "max-info · eap" in printed


def test_the_default_estimator_is_eap_and_its_help_names_the_source(capsys):
    settings = CatSettings()
    assert settings.estimator == "eap"
    estimator = settings.make_estimator()
    # The posterior mean on the paper's grid (121 points on [−6, 6]) with a N(0, 1) prior,
    # equal to the full-matrix EAP of analytics.ability on the same answers.
    reference = EAPEstimator(grid=QuadratureGrid(121, (-6.0, 6.0)))
    assert estimator.grid == reference.grid
    assert (estimator.prior_mean, estimator.prior_sd) == (0.0, 1.0)
    with pytest.raises(SystemExit) as done:
        main(["cat-simulate", "--help"])
    assert done.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default eap" in help_text
    assert "docs/adaptive_testing.md" in help_text and "1.64" in help_text


def _page_mse(app) -> tuple[np.ndarray, np.ndarray, str]:
    [figure] = [f for f in charts(app) if "mean squared error" in f["layout"]["title"]["text"]]
    cat, random = (decoded(trace["y"]) for trace in figure["data"][:2])
    return cat, random, figure["layout"]["title"]["text"]


def test_the_page_draws_what_the_command_prints(monkeypatch, real_store, tmp_path):
    monkeypatch.setenv("ENEM_DB", str(real_store))
    app = run_page(PAGE, {"year": "2022"})
    assert_clean(app)
    app.selectbox(key="cat.area").set_value("CN").run()
    assert_clean(app)
    assert app.multiselect(key="cat.years").value == [2022]
    cat, random, _ = _page_mse(app)
    table, _ = _simulate(real_store, tmp_path, "--area", "CN", "--years", "2022")
    np.testing.assert_allclose(cat[:20], table["mse_cat"][:20], rtol=1e-12)
    np.testing.assert_allclose(random, table["mse_random"], rtol=1e-12)
    assert cat[19] <= 0.35

    # A bank of several years: the same items the command pools, the same curves.
    app.multiselect(key="cat.years").set_value([2021, 2022]).run()
    assert_clean(app)
    cat, random, _ = _page_mse(app)
    pooled, _ = _simulate(real_store, tmp_path, "--area", "CN", "--years", "2021", "2022")
    n_items = len(load_area_bank(real_store, "CN", [2021, 2022]).item_ids)
    assert n_items > 87
    np.testing.assert_allclose(cat[:20], pooled["mse_cat"][:20], rtol=1e-12)
    np.testing.assert_allclose(random, pooled["mse_random"], rtol=1e-12)
    captions = " ".join(c.value for c in app.caption)
    assert f"CN: {n_items} items of 2021, 2022" in captions
