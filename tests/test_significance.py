"""analytics.significance computed by scipy gives the numbers of the formulas it replaced.

The binomial, χ² and Welch tests used to be written out by hand. They now call
``scipy.stats.binomtest``, ``scipy.stats.chisquare`` and (through
``analytics.populations.welch_test``) ``scipy.stats.ttest_ind_from_stats``. The formulas they
replaced are kept here as references, and each scipy route must agree with them on a grid of
cases: the two-sided binomial p within 1e-12 (scipy adds up the two tails where the old code
added up the outcomes), and Welch's t and dof within 1e-12 relative (the SD passes as √(s²)).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from analytics.populations import Z_95, normal_interval, standard_error, welch_test
from analytics.significance import binomial_test, chi_square_goodness_of_fit, welch_t_test

#: The tests' agreement bound: two routes to one number, never the last bits of either.
TOLERANCE = 1e-12


def _binomial_p_by_summing(k: int, n: int, chance: float, alternative: str) -> float:
    """The replaced definition: P(X ≥ k), P(X ≤ k), or the sum of the probabilities of every
    outcome no more likely than k (relative tolerance 1e-7 for ties)."""
    if alternative == "greater":
        return float(stats.binom.sf(k - 1, n, chance))
    if alternative == "less":
        return float(stats.binom.cdf(k, n, chance))
    pmf = stats.binom.pmf(np.arange(n + 1), n, chance)
    return float(min(1.0, pmf[pmf <= pmf[k] * (1 + 1e-7)].sum()))


BINOMIAL_TRIALS = (1, 2, 3, 4, 7, 10, 19, 25, 40, 57, 100, 250)
CHANCES = (0.01, 0.1, 0.2, 0.25, 1 / 3, 0.5, 0.75, 0.9, 0.99)


@pytest.mark.parametrize(("n", "chance"), list(itertools.product(BINOMIAL_TRIALS, CHANCES)))
def test_binomial_p_values_equal_the_summed_definition(n, chance):
    for k, alternative in itertools.product(range(n + 1), ("two-sided", "greater", "less")):
        ours = binomial_test(k, n, chance, alternative)
        reference = _binomial_p_by_summing(k, n, chance, alternative)
        assert ours.p_value == pytest.approx(reference, rel=0, abs=TOLERANCE), (k, alternative)
        assert ours.share == k / n


def test_binomial_one_sided_p_values_are_the_tails_exactly():
    for k in range(41):
        assert binomial_test(k, 40, 0.25, "greater").p_value == stats.binom.sf(k - 1, 40, 0.25)
        assert binomial_test(k, 40, 0.25, "less").p_value == stats.binom.cdf(k, 40, 0.25)


def test_binomial_refuses_what_scipy_would_and_is_nan_without_trials():
    assert math.isnan(binomial_test(0, 0, 0.25).p_value)
    for chance in (0.0, 1.0):
        with pytest.raises(ValueError):
            binomial_test(1, 4, chance)
    with pytest.raises(ValueError):
        binomial_test(1, 4, 0.25, "both")


def test_chi_square_equals_pearsons_formula():
    rng = np.random.default_rng(7)
    for trial in range(400):
        k = int(rng.integers(2, 8))
        observed = rng.integers(0, int(rng.choice([5, 50, 5000])), k).astype(np.float64)
        observed[0] += 1  # at least one observation
        shares = None if trial % 2 else rng.uniform(0.05, 3.0, k)
        expected_shares = np.full(k, 1.0 / k) if shares is None else shares
        expected = observed.sum() * expected_shares / expected_shares.sum()
        statistic = float(((observed - expected) ** 2 / expected).sum())
        ours = chi_square_goodness_of_fit(observed, shares)
        assert ours.statistic == pytest.approx(statistic, rel=TOLERANCE, abs=TOLERANCE)
        assert ours.p_value == pytest.approx(stats.chi2.sf(statistic, k - 1), rel=TOLERANCE,
                                             abs=TOLERANCE)
        assert (ours.dof, ours.total) == (k - 1, int(observed.sum()))


def _welch_on_variances(x, y, wx, wy) -> tuple[float, float, float]:
    """The replaced formula, on the weighted sample variances s² themselves: (t, dof, p)."""
    def moments(v, w):
        n = w.sum()
        mean = (w * v).sum() / n
        return mean, (w * (v - mean) ** 2).sum() / (n - 1), n

    mean_x, var_x, n_x = moments(x, wx)
    mean_y, var_y, n_y = moments(y, wy)
    part_x, part_y = var_x / n_x, var_y / n_y
    t = (mean_x - mean_y) / math.sqrt(part_x + part_y)
    dof = (part_x + part_y) ** 2 / (part_x**2 / (n_x - 1) + part_y**2 / (n_y - 1))
    return t, dof, float(2 * stats.t.sf(abs(t), dof))


def test_weighted_welch_reduces_to_the_summary_form_and_the_replaced_formula():
    rng = np.random.default_rng(11)
    for trial in range(300):
        nx, ny = (int(v) for v in rng.integers(2, 30, 2))
        x = rng.normal(500.0, rng.uniform(0.1, 50.0), nx)  # offsets such as notas near 500
        y = rng.normal(505.0, 20.0, ny)
        wx = rng.integers(1, 1000, nx).astype(np.float64) if trial % 2 else np.ones(nx)
        wy = rng.integers(1, 1000, ny).astype(np.float64) if trial % 2 else np.ones(ny)
        ours = welch_t_test(x, y, wx, wy)
        t, dof, p = _welch_on_variances(x, y, wx, wy)
        assert ours.t == pytest.approx(t, rel=TOLERANCE)
        assert ours.dof == pytest.approx(dof, rel=TOLERANCE)
        assert ours.p_value == pytest.approx(p, rel=1e-9, abs=TOLERANCE)
        # The weighted test is the summary test of the weighted mean, SD and n.
        summary = welch_test(ours.mean_x, math.sqrt(((wx * (x - ours.mean_x) ** 2).sum())
                                                    / (ours.n_x - 1)), ours.n_x,
                             ours.mean_y, math.sqrt(((wy * (y - ours.mean_y) ** 2).sum())
                                                    / (ours.n_y - 1)), ours.n_y)
        assert (float(summary.t), float(summary.df), float(summary.p)) == pytest.approx(
            (ours.t, ours.dof, ours.p_value), rel=TOLERANCE, abs=TOLERANCE)


def test_welch_summary_form_is_scipys_where_defined_and_nan_elsewhere():
    rng = np.random.default_rng(5)
    mean1, mean2 = rng.normal(0, 1, 500), rng.normal(0, 1, 500)
    sd1, sd2 = rng.uniform(0, 2, 500), rng.uniform(0, 2, 500)
    n1, n2 = rng.integers(0, 40, 500), rng.integers(0, 40, 500)
    sd1[::25] = sd2[::25] = 0.0  # both variances 0: no test
    ours = welch_test(mean1, sd1, n1, mean2, sd2, n2)
    with np.errstate(divide="ignore", invalid="ignore"):  # n = 0 rows
        defined = (n1 >= 2) & (n2 >= 2) & (sd1**2 / n1 + sd2**2 / n2 > 0)
    reference = stats.ttest_ind_from_stats(mean1[defined], sd1[defined], n1[defined],
                                           mean2[defined], sd2[defined], n2[defined],
                                           equal_var=False)
    np.testing.assert_allclose(ours.t[defined], reference.statistic, rtol=TOLERANCE)
    np.testing.assert_allclose(ours.p[defined], reference.pvalue, rtol=TOLERANCE, atol=1e-300)
    assert np.isnan(ours.t[~defined]).all() and np.isnan(ours.df[~defined]).all()
    assert np.isnan(ours.p[~defined]).all()


def test_normal_interval_is_estimate_plus_minus_z_standard_errors():
    low, high = normal_interval([0.5, 500.0], [0.1, 2.0])
    np.testing.assert_allclose(low, [0.5 - Z_95 * 0.1, 500.0 - Z_95 * 2.0], rtol=TOLERANCE)
    np.testing.assert_allclose(high, [0.5 + Z_95 * 0.1, 500.0 + Z_95 * 2.0], rtol=TOLERANCE)
    low, high = normal_interval(1.0, 0.5, z=1.0)
    assert (float(low), float(high)) == (0.5, 1.5)
    assert np.isnan(normal_interval(np.nan, 1.0)[0]) and np.isnan(normal_interval(1.0, np.nan)[1])


def test_standard_error_of_a_mean_is_sd_over_root_n():
    np.testing.assert_allclose(standard_error([2.0, 3.0], [4, 9]), [1.0, 1.0], rtol=TOLERANCE)
    assert np.isnan(standard_error(np.nan, 5))
