"""workflows.items: the gap table, human–machine DIF from stored score tables and machine
calibration, each against the same computation on per-examinee data or known parameters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics.irt import ItemBank, probability
from analytics.items.dif import logistic_dif, mantel_haenszel, mh_tables
from analytics.items.fit import score_tables
from analytics.items.gaps import humans_near, item_gaps
from workflows.items.calibration import machine_calibration
from workflows.items.dif import human_machine_dif
from workflows.items.gaps import ALL_RUNS, gap_table, icc_arrays, ranked
from workflows.items.selection import pattern_matrix


def _bank(rng, n_items: int) -> ItemBank:
    return ItemBank(rng.uniform(0.8, 2.0, n_items), rng.normal(0.0, 1.0, n_items),
                    rng.uniform(0.1, 0.2, n_items))


def _answers(rng, theta, bank, shift=None) -> np.ndarray:
    b = bank.b if shift is None else bank.b + shift
    p = probability(theta, ItemBank(bank.a, b, bank.c))
    return (rng.random(p.shape) < p).astype(float)


def _long(correct: np.ndarray, theta: np.ndarray, series: list[str], ids) -> pd.DataFrame:
    """Pattern rows as ``model_pattern_matrix`` returns them (NaN answers left out)."""
    rows = [{"pattern": f"p{r:04d}", "model": series[r], "theta": theta[r], "item_id": ids[i],
             "correct": correct[r, i]}
            for r in range(len(correct)) for i in range(correct.shape[1])
            if np.isfinite(correct[r, i])]
    return pd.DataFrame(rows).sample(frac=1.0, random_state=1)  # any order


def test_pattern_matrix_rebuilds_the_patterns_from_long_rows():
    correct = np.array([[1.0, np.nan, 0.0], [0.0, 1.0, 1.0]])
    long = _long(correct, np.array([0.5, -1.0]), ["m1", "m2"], [30, 10, 20])
    got, theta, series = pattern_matrix(long, [30, 10, 20])
    np.testing.assert_array_equal(got, correct)
    assert theta.tolist() == [0.5, -1.0] and series.tolist() == ["m1", "m2"]


def test_gap_table_per_series_and_pooled():
    rng = np.random.default_rng(5)
    bank = _bank(rng, 6)
    ids = np.arange(101, 107)
    theta = np.r_[rng.normal(1.0, 0.2, 20), rng.normal(-0.5, 0.2, 10)]
    correct = _answers(rng, theta, bank)
    correct[3, 2] = np.nan
    series = ["m-high"] * 20 + ["m-low"] * 10
    items = pd.DataFrame({"item_id": ids, "first_position": np.arange(6, 0, -1),
                          "skill": [1, 2, 3, 4, 5, 6], "a": bank.a, "b": bank.b, "c": bank.c,
                          "point_biserial": [0.11, 0.22, 0.33, 0.44, 0.55, 0.66]})
    lower = np.arange(-2.0, 2.0, 0.25)
    icc = pd.DataFrame([{"item_id": int(i), "theta_bin": edge, "n": 100 + k,
                         "n_correct": 10 + k + j}
                        for j, i in enumerate(ids) for k, edge in enumerate(lower)])
    table = gap_table(_long(correct, theta, series, ids), items, icc)
    # items in booklet order (first_position descending ids here)
    high = table[table["series"] == "m-high"]
    assert high["item_id"].tolist() == ids[::-1].tolist()
    # Each item keeps the humans' point-biserial it came with, in every series' rows.
    assert table.groupby("item_id")["point_biserial"].nunique().eq(1).all()
    np.testing.assert_allclose(high["point_biserial"], [0.66, 0.55, 0.44, 0.33, 0.22, 0.11])
    order = np.argsort(items["first_position"].to_numpy())
    expected = item_gaps(correct[:20][:, order], theta[:20], ItemBank(
        bank.a[order], bank.b[order], bank.c[order]))
    np.testing.assert_allclose(high["residual"], expected.residual)
    answered, right, bins = icc_arrays(icc, ids[order])
    share, _ = humans_near(answered, right, bins, 0.25, float(theta[:20].mean()))
    np.testing.assert_allclose(high["humans_near"], share)
    np.testing.assert_allclose(high["gap"], high["observed"] - share)
    pooled = table[table["series"] == ALL_RUNS]
    everything = item_gaps(correct[:, order], theta, ItemBank(bank.a[order], bank.b[order],
                                                              bank.c[order]))
    np.testing.assert_allclose(pooled["residual"], everything.residual)
    assert pooled["answers"].tolist() == everything.answers.tolist()
    low = table[table["series"] == "m-low"]
    weights = np.c_[high["answers"].to_numpy(), low["answers"].to_numpy()]
    shares = np.c_[high["humans_near"].to_numpy(), low["humans_near"].to_numpy()]
    np.testing.assert_allclose(pooled["humans_near"],
                               (weights * shares).sum(axis=1) / weights.sum(axis=1))
    top = ranked(table)
    assert top["residual"].is_monotonic_decreasing


def test_dif_from_score_tables_equals_dif_on_every_examinee():
    rng = np.random.default_rng(11)
    bank = _bank(rng, 12)
    humans = _answers(rng, rng.normal(0.0, 1.0, 4000), bank)
    shift = np.zeros(12)
    shift[[2, 7]] = [-1.5, 1.5]  # item 2 easier for machines, item 7 harder
    machines = _answers(rng, rng.normal(0.8, 0.4, 300), bank, shift)
    machines[5, 4] = np.nan  # one unanswered item, scored wrong in the matching score
    counts, by_score = score_tables(humans)
    got = human_machine_dif(np.arange(12) + 500, np.arange(1, 13), counts, by_score, machines)
    # the same statistics from the 4,300 examinees one by one
    everyone = np.vstack([humans, machines])
    focal = np.r_[np.zeros(4000, bool), np.ones(300, bool)]
    total = np.nansum(everyone, axis=1)
    mh = mantel_haenszel(*mh_tables(everyone, focal, total))
    np.testing.assert_allclose(got["mh_delta"], mh.delta, rtol=1e-9)
    np.testing.assert_allclose(got["mh_chi2"], mh.chi2, rtol=1e-9)
    lr = logistic_dif(everyone, focal, total)
    np.testing.assert_allclose(got["lr_chi2_total"], lr.chi2_total, rtol=1e-6, atol=1e-8)
    assert got.loc[2, "favours"] == "machines" and got.loc[7, "favours"] == "humans"
    assert got.loc[2, "ets_class"] == "C" and got.loc[7, "ets_class"] == "C"
    assert got["machines"].tolist() == [300] * 4 + [299] + [300] * 7
    assert (got["mh_q"] >= got["mh_p"] - 1e-15).all()


def test_machine_calibration_links_the_machines_b_to_the_humans_scale():
    rng = np.random.default_rng(3)
    bank = ItemBank(rng.uniform(0.8, 1.8, 20), rng.normal(0.0, 1.0, 20))
    # the machine population's scale: θ_machines = (θ_humans − 0.5) / 1.3
    theta = rng.normal(0.0, 1.0, 1500)
    machine_b = (bank.b - 0.5) / 1.3
    correct = _answers(rng, theta, ItemBank(bank.a * 1.3, machine_b))
    ids = np.arange(20) + 1
    items = pd.DataFrame({"item_id": ids, "first_position": ids, "skill": 1, "a": bank.a,
                          "b": bank.b, "c": 0.0})
    result = machine_calibration(_long(correct, np.zeros(1500), ["m"] * 1500, ids), items)
    assert result.patterns == 1500 and result.model == "2PL"
    assert result.slope == pytest.approx(1.3, rel=0.1)
    assert result.intercept == pytest.approx(0.5, abs=0.15)
    assert np.abs(result.table["b_difference"]).max() < 0.35
    small = machine_calibration(_long(correct[:9], np.zeros(9), ["m"] * 9, ids), items)
    assert any("only 9 examinees" in note for note in small.notes)
    empty = machine_calibration(pd.DataFrame(columns=["pattern", "model", "theta", "item_id",
                                                      "correct"]), items)
    assert empty.patterns == 0 and np.isnan(empty.slope)


def test_human_item_fit_flags_a_misfitting_item_by_q_and_rmsea():
    from workflows.items.fit import human_item_fit, rmsea

    rng = np.random.default_rng(8)
    bank = _bank(rng, 15)
    theta = rng.normal(0.0, 1.0, 30000)
    answers = _answers(rng, theta, bank)
    # item 4 answered from a curve far flatter than its parameters say
    answers[:, 4] = (rng.random(30000) < 0.35 + 0.3 / (1 + np.exp(-0.4 * theta))).astype(float)
    counts, by_score = score_tables(answers)
    table = human_item_fit(np.arange(15), np.arange(1, 16), bank, counts, by_score)
    assert table.loc[4, "misfit"] and table["misfit"].sum() <= 2
    # RMSEA by hand
    assert rmsea(np.array([20.0]), np.array([10]), 1001.0)[0] == pytest.approx(
        np.sqrt(10 / (10 * 1000)))
    assert rmsea(np.array([5.0]), np.array([10]), 1001.0)[0] == 0.0
    assert np.isnan(rmsea(np.array([5.0]), np.array([0]), 1001.0)[0])
