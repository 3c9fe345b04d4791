"""analytics.reliability: the test characteristic curve, marginal and empirical reliability."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from analytics.ability import PAPER_GRID, EAPEstimator
from analytics.irt import ItemBank, probability, test_information
from analytics.reliability import (
    empirical_reliability,
    marginal_reliability,
    test_characteristic_curve,
)


def _bank(seed: int, n_items: int, guessing: bool = True) -> ItemBank:
    rng = np.random.default_rng(seed)
    a, b = rng.lognormal(0.0, 0.3, n_items), rng.normal(0.0, 1.0, n_items)
    return ItemBank.from_arrays(a, b, rng.uniform(0.0, 0.25, n_items) if guessing else None)


def _hard_bank(seed: int, n_items: int) -> ItemBank:
    """Steep, hard items with real guessing, like ENEM's: little information at low θ."""
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.7, 0.3, n_items), rng.normal(1.0, 1.0, n_items),
                                rng.uniform(0.1, 0.25, n_items))


# --- test characteristic curve ------------------------------------------------------------------

def test_tcc_is_the_sum_of_item_probabilities_and_increases():
    bank = _bank(0, 25)
    theta = np.linspace(-6, 6, 241)
    tcc = test_characteristic_curve(theta, bank)
    np.testing.assert_allclose(tcc, probability(theta, bank).sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(test_characteristic_curve(theta, bank, proportion=True), tcc / 25,
                               rtol=1e-13)
    assert np.all(np.diff(tcc) > 0)
    # Its limits: Σ c far below the items, n far above.
    np.testing.assert_allclose(test_characteristic_curve([-40.0, 40.0], bank),
                               [bank.c.sum(), 25.0], rtol=1e-9)


def test_tcc_leaves_out_items_without_parameters():
    bank = _bank(1, 6)
    b = bank.b.copy()
    b[2] = np.nan
    gap = ItemBank.from_arrays(bank.a, b, bank.c)
    keep = np.arange(6) != 2
    theta = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(test_characteristic_curve(theta, gap),
                               test_characteristic_curve(theta, bank.subset(keep)), rtol=1e-13)
    np.testing.assert_allclose(test_characteristic_curve(theta, gap, proportion=True),
                               test_characteristic_curve(theta, bank.subset(keep)) / 5,
                               rtol=1e-13)


# --- marginal reliability ----------------------------------------------------------------------

def _quad_reliability(bank, low, high, mean, sd):
    """σ²/(σ² + E[1/I]) with the expectation over N(μ, σ²) truncated to [low, high], by
    adaptive quadrature."""

    def integrand(theta):
        return norm.pdf(theta, mean, sd) / test_information(theta, bank)[0]

    error, _ = integrate.quad(integrand, low, high, epsabs=0.0, epsrel=1e-12, limit=200)
    error /= norm.cdf(high, mean, sd) - norm.cdf(low, mean, sd)
    return sd**2 / (sd**2 + error)


@pytest.mark.parametrize("bank, theta_range, mean, sd", [
    (_bank(2, 30, guessing=False), (-6.0, 6.0), 0.0, 1.0),
    (_bank(3, 45), (-6.0, 6.0), 0.0, 1.0),
    (_hard_bank(4, 45), (-6.0, 6.0), 0.0, 1.0),
    (_bank(5, 20), (-4.0, 4.0), 0.4, 0.8),
], ids=["2pl", "3pl", "hard-3pl", "shifted-prior"])
def test_marginal_reliability_matches_adaptive_quadrature(bank, theta_range, mean, sd):
    expected = _quad_reliability(bank, *theta_range, mean, sd)
    got = marginal_reliability(bank, theta_range=theta_range, prior_mean=mean, prior_sd=sd)
    assert got == pytest.approx(expected, rel=1e-8)


def test_marginal_reliability_range_matters_only_with_guessing():
    # Without guessing 1/I grows like e^{Da|θ|} and φ wins well inside ±4; with guessing and hard
    # items the information vanishes like e^{2Da θ} at low θ, so the lower limit moves E[1/I].
    two_pl = _bank(6, 45, guessing=False)
    assert marginal_reliability(two_pl, theta_range=(-4, 4)) == pytest.approx(
        marginal_reliability(two_pl), abs=1e-3)
    hard = _hard_bank(6, 45)
    assert marginal_reliability(hard, theta_range=(-4, 4)) > marginal_reliability(hard) + 0.01


def test_marginal_reliability_is_zero_without_information():
    assert marginal_reliability(ItemBank.from_arrays([np.nan], [0.0])) == 0.0


# --- empirical reliability ---------------------------------------------------------------------

def test_empirical_reliability_with_weights_equals_the_expanded_sample():
    rng = np.random.default_rng(7)
    eap, se = rng.normal(0, 0.9, 200), rng.uniform(0.2, 0.6, 200)
    counts = rng.integers(0, 6, 200)
    expanded_eap, expanded_se = np.repeat(eap, counts), np.repeat(se, counts)
    direct = np.var(expanded_eap, ddof=1) / (np.var(expanded_eap, ddof=1)
                                             + np.mean(expanded_se**2))
    assert empirical_reliability(eap, se, counts) == pytest.approx(direct, rel=1e-12)
    assert empirical_reliability(expanded_eap, expanded_se) == pytest.approx(direct, rel=1e-12)


def test_empirical_reliability_rejects_bad_inputs():
    with pytest.raises(ValueError):
        empirical_reliability([0.1, 0.2], [0.3])
    with pytest.raises(ValueError):
        empirical_reliability([0.1, np.nan], [0.3, 0.3])
    with pytest.raises(ValueError):
        empirical_reliability([0.1, 0.2], [0.3, 0.3], weights=[1.0, -1.0])
    with pytest.raises(ValueError):
        empirical_reliability([0.1, 0.2], [0.3, 0.3], weights=[0.5, 0.5])


# --- simulation -------------------------------------------------------------------------------

def test_reliabilities_match_the_squared_correlation_of_true_theta_and_eap():
    # 60 3PL items, 20,000 N(0, 1) examinees: the share of var(θ) the EAPs recover.
    bank = _bank(8, 60)
    rng = np.random.default_rng(9)
    theta = rng.normal(size=20000)
    responses = (rng.random((20000, 60)) < probability(theta, bank)).astype(float)
    estimate = EAPEstimator(grid=PAPER_GRID).estimate(responses, bank)
    squared_correlation = np.corrcoef(theta, estimate.theta)[0, 1] ** 2
    assert marginal_reliability(bank) == pytest.approx(squared_correlation, abs=0.03)
    assert empirical_reliability(estimate.theta, estimate.se) == pytest.approx(
        squared_correlation, abs=0.01)
