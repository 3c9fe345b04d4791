"""analytics.populations: inverse-variance pooling, Welch's test, percentiles, rank changes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from analytics.populations import (
    QUANTILE_LEVELS,
    Z_95,
    count_moments,
    count_quantiles,
    grouped_moments,
    grouped_quantiles,
    intervals_overlap,
    percentile_in,
    pool_inverse_variance,
    rank_changes,
    sorted_group_quantiles,
    welch_test,
)


def test_pooling_by_hand():
    # w = 1/SE² = 4, 16, 1; Σw = 21; Σwθ = 4·0.5 + 16·1.0 + 1·2.0 = 20.
    pooled = pool_inverse_variance([0.5, 1.0, 2.0], [0.5, 0.25, 1.0])
    assert pooled.theta == pytest.approx(20 / 21, abs=1e-15)
    assert pooled.se == pytest.approx(1 / np.sqrt(21), abs=1e-15)
    assert pooled.ci_low == pytest.approx(20 / 21 - 1.96 / np.sqrt(21), abs=1e-15)
    assert pooled.ci_high == pytest.approx(20 / 21 + 1.96 / np.sqrt(21), abs=1e-15)
    assert pooled.n == 3


def test_pooling_equal_errors_is_the_mean_and_shrinks_by_root_n():
    theta = np.array([0.1, 0.4, -0.2, 0.9])
    pooled = pool_inverse_variance(theta, np.full(4, 0.3))
    assert pooled.theta == pytest.approx(theta.mean(), abs=1e-15)
    assert pooled.se == pytest.approx(0.3 / 2, abs=1e-15)


def test_pooling_leaves_out_estimates_without_a_usable_error():
    pooled = pool_inverse_variance([1.0, 5.0, np.nan, 7.0, 3.0], [0.5, np.inf, 0.2, 0.0, 0.5])
    assert pooled.n == 2
    assert pooled.theta == pytest.approx(2.0)
    empty = pool_inverse_variance([np.nan], [0.3])
    assert empty.n == 0 and np.isnan(empty.theta) and np.isnan(empty.ci_high)


def test_pooling_is_associative():
    """Pooling groups of estimates, then the group pools, equals pooling them all at once."""
    rng = np.random.default_rng(3)
    theta, se = rng.normal(size=12), rng.uniform(0.2, 0.6, 12)
    parts = [pool_inverse_variance(theta[i:i + 4], se[i:i + 4]) for i in (0, 4, 8)]
    twice = pool_inverse_variance([p.theta for p in parts], [p.se for p in parts])
    once = pool_inverse_variance(theta, se)
    assert twice.theta == pytest.approx(once.theta, abs=1e-12)
    assert twice.se == pytest.approx(once.se, abs=1e-12)


@pytest.mark.parametrize("case", [
    (0.7, 0.25, 11, 0.45, 0.9, 4000),     # a model's 11 variants against a large population
    (55.0, 6.0, 11, 48.0, 15.0, 250_000),
    (-0.3, 1.1, 5, 0.2, 0.4, 7),
    (1.0, 0.0, 11, 0.5, 1.0, 30),         # one side without spread
])
def test_welch_matches_scipy(case):
    mean1, sd1, n1, mean2, sd2, n2 = case
    ours = welch_test(mean1, sd1, n1, mean2, sd2, n2)
    theirs = stats.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2, equal_var=False)
    assert float(ours.t) == pytest.approx(theirs.statistic, rel=1e-12)
    assert float(ours.p) == pytest.approx(theirs.pvalue, rel=1e-9)
    # Welch–Satterthwaite by hand.
    v1, v2 = sd1 ** 2 / n1, sd2 ** 2 / n2
    assert float(ours.df) == pytest.approx((v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1)
                                                             + v2 ** 2 / (n2 - 1)), rel=1e-12)


def test_welch_broadcasts_over_populations_and_refuses_single_values():
    result = welch_test(1.0, 0.3, 11, np.array([0.0, 0.5, 1.0]), np.array([1.0, 1.0, 1.0]),
                        np.array([100, 100, 1]))
    assert result.t.shape == (3,)
    assert result.t[0] > result.t[1] > 0
    assert np.isnan(result.t[2]) and np.isnan(result.p[2])


def test_intervals_overlap():
    assert intervals_overlap(0.0, 1.0, 1.0, 2.0)
    assert not intervals_overlap(0.0, 1.0, 1.01, 2.0)
    assert intervals_overlap(np.array([0.0, 3.0]), np.array([1.0, 4.0]), 0.5, 0.6).tolist() \
        == [True, False]
    assert not intervals_overlap(np.nan, 1.0, 0.0, 2.0)


def test_percentile_of_a_continuous_population_matches_scipy():
    rng = np.random.default_rng(7)
    raw = rng.normal(0.2, 1.0, 20_000)
    quantiles = np.percentile(raw, QUANTILE_LEVELS)
    values = np.array([-5.0, -1.0, 0.0, 0.2, 0.77, 2.5, 9.0])
    ours = percentile_in(values, quantiles)
    exact = np.array([stats.percentileofscore(raw, v, kind="mean") for v in values])
    # Between stored quantiles 1% apart the quantile function is linear: far below 1 point.
    np.testing.assert_allclose(ours, exact, atol=0.05)
    assert ours[0] == 0.0 and ours[-1] == 100.0


def test_percentile_counts_ties_half():
    """Percent correct is discrete: a value shared by many candidates sits in the middle of
    their block, as scipy's kind='mean' puts it."""
    rng = np.random.default_rng(1)
    raw = rng.binomial(45, 0.4, 50_000).astype(float)
    quantiles = np.percentile(raw, QUANTILE_LEVELS)
    for value in (10.0, 18.0, 25.0, 18.5):
        exact = stats.percentileofscore(raw, value, kind="mean")
        assert percentile_in(value, quantiles) == pytest.approx(exact, abs=1.0)


def test_percentile_by_hand():
    quantiles = np.array([0.0, 10.0, 10.0, 20.0, 40.0])
    levels = np.array([0.0, 25.0, 50.0, 75.0, 100.0])
    # 5 is halfway between the 0th and 25th; 10 spans 25–50 (middle 37.5); 30 halfway 75–100.
    np.testing.assert_allclose(percentile_in([5.0, 10.0, 30.0, -1.0, 41.0], quantiles, levels),
                               [12.5, 37.5, 87.5, 0.0, 100.0])
    assert np.isnan(percentile_in(np.nan, quantiles, levels))
    assert np.isnan(percentile_in(1.0, np.full(5, np.nan), levels))


def test_rank_changes_on_a_constructed_case():
    # Percent correct: A > B > C > D; IRT: B > A > D > C (B and D move up, A and C down).
    ctt = np.array([80.0, 70.0, 60.0, 50.0])
    irt = np.array([1.0, 1.5, 0.2, 0.3])
    by_ctt, by_irt, change = rank_changes(ctt, irt)
    assert by_ctt.tolist() == [1, 2, 3, 4]
    assert by_irt.tolist() == [2, 1, 4, 3]
    assert change.tolist() == [-1, 1, -1, 1]


def test_rank_ties_share_the_best_rank_and_nan_ranks_last():
    by_first, by_second, change = rank_changes([3.0, 3.0, 1.0, np.nan], [0.0, 1.0, 2.0, 3.0])
    assert by_first.tolist() == [1, 1, 3, 4]
    assert by_second.tolist() == [4, 3, 2, 1]
    assert change.tolist() == [-3, -2, 1, 3]


def test_z_95():
    assert Z_95 == pytest.approx(stats.norm.ppf(0.975), abs=4e-5)


def test_grouped_quantiles_match_numpy_group_by_group():
    rng = np.random.default_rng(5)
    values = rng.normal(size=5000)
    codes = rng.integers(0, 7, 5000)
    codes[codes == 3] = 4  # group 3 empty
    ours = grouped_quantiles(values, codes, 8)
    order = np.argsort(values)
    np.testing.assert_array_equal(sorted_group_quantiles(values[order], codes[order], 8), ours)
    for group in range(8):
        members = values[codes == group]
        if members.size:
            np.testing.assert_allclose(ours[group], np.percentile(members, QUANTILE_LEVELS),
                                       rtol=1e-13, atol=1e-13)
        else:
            assert np.isnan(ours[group]).all()


def test_grouped_quantiles_with_ties_and_single_members():
    values = np.array([3.0, 1.0, 1.0, 2.0, 7.0, 1.0])
    codes = np.array([0, 0, 0, 0, 1, 0])
    ours = grouped_quantiles(values, codes, 2, levels=[0.0, 25.0, 50.0, 90.0, 100.0])
    np.testing.assert_allclose(ours[0], np.percentile([3.0, 1.0, 1.0, 2.0, 1.0],
                                                      [0, 25, 50, 90, 100]))
    np.testing.assert_allclose(ours[1], [7.0] * 5)


def test_grouped_moments_match_numpy():
    rng = np.random.default_rng(9)
    values = 500.0 + 100.0 * rng.normal(size=3000)
    codes = rng.integers(0, 4, 3000)
    codes[0] = 4  # a group of one member
    moments = grouped_moments(values, codes, 6)
    for group in range(4):
        members = values[codes == group]
        assert moments.n[group] == members.size
        assert moments.mean[group] == pytest.approx(members.mean(), rel=1e-13)
        assert moments.sd[group] == pytest.approx(members.std(ddof=1), rel=1e-10)
        assert moments.se[group] == pytest.approx(members.std(ddof=1) / np.sqrt(members.size),
                                                  rel=1e-10)
    assert moments.n[4] == 1 and np.isnan(moments.sd[4]) and moments.mean[4] == values[0]
    assert moments.n[5] == 0 and np.isnan(moments.mean[5])


def test_count_quantiles_and_moments_match_the_raw_values():
    """Discrete data (percent correct, notas in tenths) summarised from counts per value give
    numpy's quantiles and moments of the raw values."""
    rng = np.random.default_rng(2)
    values = np.array([0.0, 100 / 45, 100 / 44, 200 / 45, 50.0, 100.0])
    codes = rng.integers(0, 3, 4000)
    which = rng.integers(0, values.size, 4000)
    which[codes == 2] = 4  # every member of group 2 shares one value
    counts = np.zeros((4, values.size), dtype=np.int64)
    np.add.at(counts, (codes, which), 1)
    quantiles = count_quantiles(counts, values)
    moments = count_moments(counts, values)
    for group in range(3):
        raw = values[which[codes == group]]
        np.testing.assert_allclose(quantiles[group], np.percentile(raw, QUANTILE_LEVELS),
                                   rtol=1e-13, atol=1e-12)
        assert moments.mean[group] == pytest.approx(raw.mean(), rel=1e-12)
        assert moments.n[group] == raw.size
    assert moments.sd[0] == pytest.approx(values[which[codes == 0]].std(ddof=1), rel=1e-10)
    assert moments.sd[2] == 0.0
    assert np.isnan(quantiles[3]).all() and moments.n[3] == 0
