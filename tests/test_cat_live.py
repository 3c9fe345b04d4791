"""Live CAT through the model backends: the random baseline and the tiny transformers model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import EAPEstimator, ItemBank, QuadratureGrid
from inference.backends import make_scorer
from store.cat_queries import cat_paths
from store.connection import connected
from testbed.tiny_model import build_tiny_model
from workflows.cat.live import CatRunSpec, execute_live_cat
from workflows.runs.folder import RunFolder


class _FailingAfter:
    """The random backend that raises after ``calls`` score calls (a run killed mid-way)."""

    name = "random"

    def __init__(self, calls: int, seed: int = 0):
        self.inner = make_scorer("random", seed=seed)
        self.left = calls
        self.asked = 0

    def describe(self):
        return self.inner.describe()

    def score(self, requests):
        if self.left == 0:
            raise RuntimeError("killed")
        self.left -= 1
        self.asked += len(requests)
        return self.inner.score(requests)



def test_random_backend_cat_is_stored_resumable_and_scored(demo_db, tmp_path):
    spec = CatRunSpec(model="", backend="random", year=2023, areas=("MT", "CH"), n_paths=2,
                      seed=3, settings={"estimator": "eap", "grid_points": 61,
                                        "se_target": 0.45, "max_items": 15})
    killed = _FailingAfter(calls=5, seed=3)
    with pytest.raises(RuntimeError, match="killed"):
        execute_live_cat(spec, demo_db, tmp_path / "runs", scorer=killed)
    folder = RunFolder(tmp_path / "runs" / spec.run_id)
    status = folder.read_json("status.json")
    assert (status["status"], status["error"]) == ("failed", "RuntimeError: killed")
    assert (status["units_done"], status["units_total"]) == (5 * 2, 2 * 2 * 15)
    resumed = _FailingAfter(calls=-1, seed=3)
    rows = execute_live_cat(spec, demo_db, tmp_path / "runs", scorer=resumed)
    status = folder.read_json("status.json")
    assert (status["status"], status["units_done"]) == ("finished", len(rows))
    whole = execute_live_cat(CatRunSpec.from_dict(spec.to_dict()), demo_db,
                             tmp_path / "other-runs", scorer=make_scorer("random", seed=3))
    key = ["area", "path", "step"]
    pd.testing.assert_frame_equal(
        rows.sort_values(key)[key + ["item_id", "choice", "theta"]].reset_index(drop=True),
        whole.sort_values(key)[key + ["item_id", "choice", "theta"]].reset_index(drop=True))
    # The resumed run asked only what the killed one had not: five steps were already there.
    assert resumed.asked == len(rows) - 5 * 2

    with connected(demo_db, read_only=True) as con:
        stored = cat_paths(con, 2023)
        items = con.execute("SELECT DISTINCT item_id, a, b, c, key FROM items "
                            "WHERE year = 2023 AND area IN ('MT', 'CH')").df()
    assert len(stored) == len(rows) and set(stored["run_id"]) == {spec.run_id}
    for _, steps in stored.groupby(["area", "path"]):
        steps = steps.sort_values("step")
        assert steps["step"].tolist() == list(range(1, len(steps) + 1))
        assert steps["item_id"].is_unique
        last = steps.iloc[-1]
        assert len(steps) == 15 or last["theta_se"] < 0.45
        # Correct means the chosen letter is the item's key.
        keys = items.drop_duplicates("item_id").set_index("item_id")
        assert (steps["correct"] == (steps["choice"].to_numpy()
                                      == keys.loc[steps["item_id"], "key"].to_numpy())).all()
        # θ̂ after the last step from analytics.ability on the answered items alone.
        params = keys.loc[steps["item_id"]]
        bank = ItemBank.from_arrays(params["a"], params["b"], params["c"])
        theta = EAPEstimator(grid=QuadratureGrid(61, (-6.0, 6.0))).estimate(
            steps["correct"].to_numpy(float)[None, :], bank).theta[0]
        assert last["theta"] == pytest.approx(theta, abs=1e-9)
    # Path 0 shows the options in their original order, path 1 another order: different choices.
    assert not np.array_equal(stored[stored["path"] == 0]["choice"].to_numpy()[:5],
                              stored[stored["path"] == 1]["choice"].to_numpy()[:5])


@pytest.mark.slow
def test_tiny_transformers_model_takes_a_cat(demo_db, tmp_path):
    folder = build_tiny_model(tmp_path / "tiny")
    spec = CatRunSpec(model=str(folder), backend="transformers", year=2023, areas=("MT",),
                      language="en", n_paths=2, seed=1, model_name="tiny",
                      settings={"max_items": 6, "estimator": "map"})
    rows = execute_live_cat(spec, demo_db, tmp_path / "runs")
    assert len(rows) == 12 and set(rows["model_id"]) == {"tiny"}
    assert set(rows["choice"]) <= set("ABCDE")
    assert np.isfinite(rows["theta"]).all() and (rows["theta_se"] > 0).all()
