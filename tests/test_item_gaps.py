"""analytics.items.gaps: observed against 3PL-expected correctness by hand, its calibration on
data simulated from the model, the planted gaps it finds, and humans near a θ from binned
counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analytics.irt import ItemBank
from analytics.items.gaps import humans_near, item_gaps, marked_direction


def _p(theta: float, a: float, b: float, c: float) -> float:
    return c + (1 - c) / (1 + math.exp(-a * (theta - b)))


def test_item_gaps_by_hand_with_a_skipped_answer():
    bank = ItemBank([1.0, 2.0], [0.0, 1.0], [0.2, 0.0])
    theta = np.array([0.5, -1.0, 2.0])
    correct = np.array([[1.0, 0.0], [0.0, np.nan], [1.0, 1.0]])
    got = item_gaps(correct, theta, bank)
    # item 1: all three patterns; item 2: the first and third
    p1 = [_p(t, 1.0, 0.0, 0.2) for t in theta]
    p2 = [_p(t, 2.0, 1.0, 0.0) for t in (0.5, 2.0)]
    assert got.answers.tolist() == [3.0, 2.0]
    assert got.observed == pytest.approx([2 / 3, 1 / 2])
    assert got.expected == pytest.approx([sum(p1) / 3, sum(p2) / 2])
    z1 = (2 - sum(p1)) / math.sqrt(sum(p * (1 - p) for p in p1))
    z2 = (1 - sum(p2)) / math.sqrt(sum(p * (1 - p) for p in p2))
    assert got.residual == pytest.approx([z1, z2])


def test_an_item_nobody_answered_has_no_gap():
    bank = ItemBank([1.0, 1.0], [0.0, 0.0])
    got = item_gaps(np.array([[1.0, np.nan], [0.0, np.nan]]), np.array([0.0, 1.0]), bank)
    assert got.answers[1] == 0 and np.isnan(got.observed[1]) and np.isnan(got.residual[1])
    with pytest.raises(ValueError, match="n_patterns"):
        item_gaps(np.zeros((2, 3)), np.zeros(2), bank)


def test_residuals_are_standard_normal_under_the_model_and_find_planted_gaps():
    rng = np.random.default_rng(27)
    n_items, n_patterns = 40, 400
    a = rng.uniform(0.8, 2.0, n_items)
    b = rng.normal(0.0, 1.0, n_items)
    c = rng.uniform(0.1, 0.25, n_items)
    bank = ItemBank(a, b, c)
    theta = rng.normal(0.5, 0.3, n_patterns)
    p = c + (1 - c) / (1 + np.exp(-a * (theta[:, None] - b)))
    # items 0-3 much easier for these "machines" (b lowered by 2), 4-7 much harder
    shifted = b.copy()
    shifted[:4] -= 2.0
    shifted[4:8] += 2.0
    p_true = c + (1 - c) / (1 + np.exp(-a * (theta[:, None] - shifted)))
    clean = (rng.random(p.shape) < p).astype(float)
    planted = (rng.random(p.shape) < p_true).astype(float)
    z = item_gaps(clean, theta, bank).residual
    # 40 residuals of a correctly specified model: mean ~0 (SE 0.16), SD ~1
    assert abs(z.mean()) < 0.5 and 0.7 < z.std() < 1.3
    gaps = item_gaps(planted, theta, bank)
    direction = marked_direction(gaps.residual)
    assert set(direction[:4]) == {"easier"} and set(direction[4:8]) == {"harder"}
    # the unshifted items stay unmarked at |z| < 3 (an expected 0.1 false marks over 32 items)
    assert (direction[8:] == "").sum() >= 31


def test_humans_near_sums_the_bins_whose_centre_is_close():
    lower = np.array([-0.5, -0.25, 0.0, 0.25, 0.5])  # centres -0.375 … 0.625, width 0.25
    answered = np.array([[10, 20, 30, 40, 50], [0, 0, 0, 0, 5]], dtype=float)
    right = np.array([[1, 5, 15, 30, 45], [0, 0, 0, 0, 5]], dtype=float)
    share, candidates = humans_near(answered, right, lower, 0.25, theta=0.1)
    # centres within 0.25 of 0.1: -0.125 … 0.35 -> bins 1 (−0.125), 2 (0.125), 3 (0.375 no)
    assert candidates.tolist() == [50.0, 0.0]
    assert share[0] == pytest.approx(20 / 50) and np.isnan(share[1])
    share, candidates = humans_near(answered, right, lower, 0.25, theta=0.375, half_width=0.25)
    # centres 0.125, 0.375, 0.625: the two edges lie exactly 0.25 away and count
    assert candidates.tolist() == [120.0, 5.0]
    assert share[0] == pytest.approx(90 / 120)
    share, candidates = humans_near(answered, right, lower, 0.25, theta=float("nan"))
    assert np.isnan(share).all() and not candidates.any()


def test_series_agreement_is_a_one_sample_t_test_over_the_series():
    from scipy import stats

    from analytics.items.gaps import ItemGaps, agreed_direction, series_agreement

    rng = np.random.default_rng(4)
    gaps = [ItemGaps(np.full(5, 30.0), rng.random(5), rng.random(5), np.zeros(5))
            for _ in range(6)]
    gaps[2].observed[4] = np.nan  # one series did not answer item 4
    got = series_agreement(gaps)
    for item in range(5):
        d = [g.observed[item] - g.expected[item] for g in gaps
             if np.isfinite(g.observed[item])]
        reference = stats.ttest_1samp(d, 0.0)
        assert got.series[item] == len(d)
        assert got.t[item] == pytest.approx(reference.statistic)
        assert got.p_value[item] == pytest.approx(reference.pvalue)
    # planted: 9 series of different ability; items 12-14 (mid difficulty, away from the
    # ceiling and floor) much easier than the curve, 15-17 much harder
    bank = ItemBank(np.full(30, 1.5), np.linspace(-1.5, 1.5, 30), np.full(30, 0.15))
    shift = np.zeros(30)
    shift[12:15], shift[15:18] = -1.5, 1.5
    per_series = []
    for theta in np.linspace(-1.0, 1.5, 9):
        thetas = np.full(30, theta)
        p = 0.15 + 0.85 / (1 + np.exp(-1.5 * (thetas[:, None] - (bank.b + shift))))
        per_series.append(item_gaps((rng.random(p.shape) < p).astype(float), thetas, bank))
    direction = agreed_direction(series_agreement(per_series))
    assert set(direction[12:15]) == {"easier"} and set(direction[15:18]) == {"harder"}
    others = np.r_[direction[:12], direction[18:]]
    assert (others == "").sum() >= 23
    # fewer than three series are never marked this way
    assert not agreed_direction(series_agreement(per_series[:2])).any()


def test_a_t_over_series_needs_three_series():
    from analytics.items.gaps import MIN_SERIES, ItemGaps, series_agreement

    # Two series whose gaps agree to the fourth decimal: a t on 1 df would be in the thousands.
    two = [ItemGaps(np.full(2, 30.0), np.array([0.6, 0.5]), np.array([0.3, 0.5]), np.zeros(2)),
           ItemGaps(np.full(2, 30.0), np.array([0.6001, 0.7]), np.array([0.3, 0.4]),
                    np.zeros(2))]
    got = series_agreement(two)
    assert MIN_SERIES == 3
    assert got.series.tolist() == [2.0, 2.0]
    assert np.isnan(got.t).all() and np.isnan(got.p_value).all() and np.isnan(got.q_value).all()
    np.testing.assert_allclose(got.mean_gap, [0.30005, 0.15])
    # Asked for, two series give the t of 1 df the page used to print.
    assert abs(series_agreement(two, min_series=2).t[0]) > 1000
    third = ItemGaps(np.full(2, 30.0), np.array([0.5, 0.6]), np.array([0.3, 0.4]), np.zeros(2))
    assert np.isfinite(series_agreement([*two, third]).t).all()
    with pytest.raises(ValueError):
        series_agreement(two, min_series=1)
