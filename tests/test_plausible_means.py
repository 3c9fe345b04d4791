"""Group means with measurement error from stored estimates (``analytics.plausible_means``):
the closed form against the ML mean's sampling variance, the EM fit against the true means, the
intervals' coverage on simulated 3PL tests scored by EAP, and agreement with plausible values
drawn from the exact grid posteriors (``analytics.plausible_values``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from analytics.ability import EAPEstimator
from analytics.irt import ItemBank, probability
from analytics.plausible_means import (
    PrecisionTable,
    group_means,
    likelihood_precision,
    precision_bins,
    precision_table,
    table_group_means,
)
from analytics.plausible_values import (
    draw_plausible_values,
    grid_log_likelihoods,
    population_mean,
)


def _eap_of_normal_measurements(rng, theta, precision):
    """EAP and posterior SD under N(0, 1) of one normal measurement m ~ N(θ, 1/λ) each."""
    measured = theta + rng.normal(size=theta.size) / np.sqrt(precision)
    posterior_precision = precision + 1.0
    return precision * measured / posterior_precision, 1.0 / np.sqrt(posterior_precision)


def test_the_likelihood_is_the_posterior_divided_by_the_prior():
    precision, weighted = likelihood_precision([0.5, -1.0], [0.5, 1.0])
    assert precision.tolist() == pytest.approx([3.0, 0.0])  # 1/0.25 − 1; no information
    assert weighted.tolist() == pytest.approx([2.0, -1.0])
    ml, ml_weighted = likelihood_precision([0.5], [0.5], prior_sd=None)
    assert ml[0] == pytest.approx(4.0) and ml_weighted[0] == pytest.approx(2.0)


def test_with_equal_precision_the_se_is_that_of_the_groups_ml_mean():
    rng = np.random.default_rng(3)
    n, precision = 4000, 4.0
    theta = rng.normal(0.8, 0.7, n)
    eap, se = _eap_of_normal_measurements(rng, theta, np.full(n, precision))
    found = group_means(eap, se, np.zeros(n, dtype=int), 1)
    # The marginal model m ~ N(μ, σ² + 1/λ): the ML mean is the mean of m, σ² its variance − 1/λ.
    measured = eap * (precision + 1.0) / precision
    assert found.mean[0] == pytest.approx(measured.mean(), abs=1e-6)
    assert found.sd[0] ** 2 == pytest.approx(measured.var() - 1 / precision, abs=1e-5)
    assert found.se[0] == pytest.approx(np.sqrt((found.sd[0] ** 2 + 1 / precision) / n),
                                        rel=1e-3)
    # Wider than SD/√n of the EAPs, which the prior shrinks toward 0.
    assert found.se[0] > 1.2 * eap.std(ddof=1) / np.sqrt(n)


def test_group_intervals_cover_the_true_means_at_the_nominal_rate():
    rng = np.random.default_rng(26)
    means, sds, sizes = np.array([-1.0, 0.2, 1.1]), np.array([0.6, 1.0, 0.8]), [40, 200, 120]
    codes = np.repeat(np.arange(3), sizes)
    covered, eap_covered, replications = np.zeros(3), np.zeros(3), 400
    for _ in range(replications):
        theta = rng.normal(means[codes], sds[codes])
        precision = rng.uniform(1.0, 9.0, codes.size)  # SEs from 0.32 to 0.71
        eap, se = _eap_of_normal_measurements(rng, theta, precision)
        found = group_means(eap, se, codes, 3)
        covered += np.abs(found.mean - means) <= 1.96 * found.se
        for group in range(3):
            values = eap[codes == group]
            half = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
            eap_covered[group] += abs(values.mean() - means[group]) <= half
    rates = covered / replications
    assert np.all(np.abs(rates - 0.95) <= 0.03), rates
    # The mean of EAPs is pulled toward the prior's 0: its interval misses groups far from it.
    assert eap_covered[0] / replications < 0.5 and eap_covered[2] / replications < 0.5


def _bank(rng, n_items):
    return ItemBank.from_arrays(rng.uniform(0.8, 2.0, n_items), rng.normal(0.0, 1.0, n_items),
                                np.full(n_items, 0.2))


def test_on_3pl_tests_it_agrees_with_plausible_values_from_exact_posteriors():
    rng = np.random.default_rng(11)
    bank = _bank(rng, 45)
    codes = np.repeat([0, 1], [600, 600])
    true_means = np.array([-0.8, 0.9])
    theta = rng.normal(true_means[codes], 0.9)
    responses = (rng.random((codes.size, bank.n_items)) < probability(theta, bank)).astype(float)
    scored = EAPEstimator().estimate(responses, bank)
    found = group_means(scored.theta, scored.se, codes, 2)
    grid = np.linspace(-6.0, 6.0, 121)
    for group in (0, 1):
        draws = draw_plausible_values(
            grid_log_likelihoods(responses[codes == group], bank, grid), rng, points=grid)
        reference = population_mean(draws)
        assert found.mean[group] == pytest.approx(reference.estimate, abs=0.03)
        assert found.se[group] == pytest.approx(reference.se, rel=0.25)
        assert abs(found.mean[group] - true_means[group]) <= 3 * found.se[group]


def test_tiny_and_empty_groups():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty group is no reason for a RuntimeWarning
        found = group_means([0.1, 0.4, np.nan], [0.3, 0.3, 0.3], [0, 2, 2], 3)
    assert found.n.tolist() == [1, 0, 1]
    assert np.isnan(found.se).all()
    assert np.isnan(found.mean[1]) and found.mean[0] == pytest.approx(0.1 * (1 / 0.09) /
                                                                       (1 / 0.09 - 1), rel=0.05)


def test_the_precision_table_gives_the_same_group_means():
    rng = np.random.default_rng(5)
    n = 50_000
    codes = rng.integers(0, 4, n)
    precision = rng.uniform(0.2, 20.0, n)
    eap, se = _eap_of_normal_measurements(rng, rng.normal(codes * 0.5 - 0.7, 0.9), precision)
    exact = group_means(eap, se, codes, 4)
    lam, weighted = likelihood_precision(eap, se)
    half = n // 2  # tables of two halves add up to the table of the whole
    tables = [precision_table(lam[part], weighted[part], codes[part],
                              precision_bins(lam)[part], 4)
              for part in (slice(None, half), slice(half, None))]
    summed = PrecisionTable(*(getattr(tables[0], f) + getattr(tables[1], f)
                              for f in ("n", "precision", "weighted", "weighted_squares")))
    found = table_group_means(summed)
    assert found.n.tolist() == exact.n.tolist()
    assert found.mean == pytest.approx(exact.mean, abs=2e-4)
    assert found.sd == pytest.approx(exact.sd, abs=2e-4)
    assert found.se == pytest.approx(exact.se, rel=2e-3)
