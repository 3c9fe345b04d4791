"""The diagnostic report by skill on the demo fixture, recomputed by hand from the stored rows
(one loop per skill and item, the 3PL written out), and as the Adaptive testing page draws it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from store.cat_queries import area_item_icc
from store.connection import connected
from store.item_queries import area_items
from store.model_queries import model_item_correct, model_points
from tests.page_support import assert_clean, charts, decoded, run_page
from workflows.cat.skills import bin_index, mean_theta, skill_diagnostics

MODEL = "SmolLM2-135M-Instruct"


def _by_hand(db, area: str) -> tuple[str, float, dict[int, tuple[float, float, float, int]]]:
    """(label, θ, {skill: (observed, expected, humans, humans_n)}) of the demo's SmolLM2 run,
    pt 0-shot, straight from the tables."""
    with connected(db, read_only=True) as con:
        label, run_id = con.execute("SELECT label, run_id FROM model_runs WHERE model_id = ?",
                                    [MODEL]).fetchone()
        theta = con.execute("SELECT avg(theta) FROM model_scores WHERE run_id = ? AND area = ? "
                            "AND prompt_language = 'pt' AND shots = 0",
                            [run_id, area]).fetchone()[0]
        answered = con.execute(
            "SELECT item_id, avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) FROM model_responses "
            "WHERE run_id = ? AND area = ? AND prompt_language = 'pt' AND shots = 0 "
            "GROUP BY item_id", [run_id, area]).fetchall()
        report: dict[int, list] = {}
        for item_id, observed in answered:
            skill, a, b, c = con.execute(
                "SELECT DISTINCT skill, a, b, c FROM items WHERE year = 2023 AND item_id = ?",
                [item_id]).fetchone()
            if a is None:
                continue
            expected = c + (1 - c) / (1 + math.exp(-a * (theta - b)))
            n, right = con.execute(
                "SELECT sum(n), sum(n_correct) FROM item_icc WHERE year = 2023 AND item_id = ? "
                "AND theta_bin <= ? AND ? < theta_bin + 0.25", [item_id, theta, theta]).fetchone()
            report.setdefault(skill, []).append((observed, expected, right / n if n else None,
                                                 n or 0))
    means = {}
    for skill, rows in report.items():
        humans = [h for _, _, h, _ in rows if h is not None]
        means[skill] = (sum(r[0] for r in rows) / len(rows), sum(r[1] for r in rows) / len(rows),
                        sum(humans) / len(humans) if humans else float("nan"),
                        sum(r[3] for r in rows))
    return label, theta, means


@pytest.mark.parametrize("area", ["CN", "LC"])
def test_report_equals_the_hand_computation(pages_demo_db, area):
    label, theta, expected = _by_hand(pages_demo_db, area)
    with connected(pages_demo_db, read_only=True) as con:
        answers = model_item_correct(con, 2023, area, "pt", 0, [label])
        points = model_points(con, 2023, area, None, "pt", 0, [label])
        report = skill_diagnostics(answers, mean_theta(points), area_items(con, 2023, area),
                                   area_item_icc(con, 2023, area))
    assert set(report["model"]) == {label}
    assert report["skill"].tolist() == sorted(expected)
    np.testing.assert_allclose(report["theta"], theta)
    table = np.array([expected[s] for s in report["skill"]], dtype=float)
    np.testing.assert_allclose(report[["observed", "expected", "humans"]], table[:, :3],
                               atol=1e-12)
    assert report["humans_n"].tolist() == table[:, 3].astype(int).tolist()
    assert (report["humans_n"] > 0).all()


def test_bins_and_items_without_humans():
    # Bins are [k/4, (k + 1)/4): a θ on an edge belongs to the bin above it.
    assert bin_index(np.array([-0.25, -0.01, 0.0, 0.24, 0.25, 1.1])).tolist() == [-1, -1, 0, 0,
                                                                                  1, 4]
    answers = pd.DataFrame({"model": "m", "item_id": [1, 2, 3, 4], "answers": [4, 4, 4, 2],
                            "correct": [4, 1, 2, 0]})
    items = pd.DataFrame({"item_id": [1, 2, 3, 4], "skill": [7, 7, 9, 7],
                          "a": [1.0, 2.0, 1.0, 0.5], "b": [0.0, 0.3, np.nan, 1.3],
                          "c": [0.2, 0.0, 0.1, 0.0]})
    # θ = 0.3 lies in bin [0.25, 0.5): items 1 and 4 have 10 (6 right) and 30 (3 right) humans
    # there, item 2 none. Each item counts once in the humans' mean.
    icc = pd.DataFrame({"item_id": [1, 1, 2, 4], "theta_bin": [0.25, 0.0, 0.0, 0.25],
                        "n": [10, 50, 8, 30], "n_correct": [6, 20, 1, 3]})
    report = skill_diagnostics(answers, pd.DataFrame({"model": ["m"], "theta": [0.3]}), items,
                               icc, scaling=1.7)
    # Item 3 has no parameters: skill 9 is left out.
    [row] = report.to_dict("records")
    assert (row["skill"], row["n_items"], row["humans_n"]) == (7, 3, 40)
    assert row["observed"] == pytest.approx((1.0 + 0.25 + 0.0) / 3)
    p1 = 0.2 + 0.8 / (1 + math.exp(-1.7 * 1.0 * 0.3))
    p4 = 1 / (1 + math.exp(-1.7 * 0.5 * (0.3 - 1.3)))
    assert row["expected"] == pytest.approx((p1 + 0.5 + p4) / 3)
    assert row["humans"] == pytest.approx((0.6 + 0.1) / 2)


def test_page_draws_the_report(monkeypatch, pages_demo_db):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page("pages/Adaptive_testing.py", {"section": "Skills"})
    assert_clean(app)
    [figure] = [f for f in charts(app) if "accuracy by skill" in f["layout"]["title"]["text"]]
    label, _, expected = _by_hand(pages_demo_db, "CN")
    traces = {trace["name"]: trace for trace in figure["data"]}
    observed = traces[label]
    skills = [int(x[1:]) for x in observed["x"]]
    np.testing.assert_allclose(decoded(observed["y"]), [expected[s][0] for s in skills])
    np.testing.assert_allclose(decoded(traces[f"{label}: humans at its θ"]["y"]),
                               [expected[s][2] for s in skills])
    # Skills run from the largest mean accuracy − expectation over the models to the smallest;
    # the random baseline, drawn and tabled under its own name, has no strengths to rank.
    order = [int(x[1:]) for x in figure["layout"]["xaxis"]["categoryarray"]]
    [table] = [f.value for f in app.dataframe if "3PL expectation at θ" in f.value]
    baseline = "random-baseline · 0-shot · 30 shuffles"
    assert f"{baseline} (baseline: random answers, not a model)" in traces
    models = table[~table["model"].str.startswith(baseline)]
    assert set(table["model"]) - set(models["model"]) == {
        f"{baseline} (baseline: random answers, not a model)"}
    assert len(models) < len(table)
    gap = models.groupby("skill (CO_HABILIDADE)")["accuracy − expectation"].mean()
    assert np.all(np.diff(gap.loc[order].to_numpy()) <= 0)
