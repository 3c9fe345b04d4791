"""Plausible values: Rubin's rules by hand, the EM fit of the latent distribution, and a
simulation where the population's true SD is known (θ ~ N(0.5, 1), 12 items):
over 500 samples the plausible-value intervals cover the true SD and mean at the nominal 95%
(±2 points), while the interval built from EAP θ itself (SD ± 1.96·SD/√(2(n − 1))) almost
never covers the SD, because EAP shrinks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from analytics.ability import EAPEstimator
from analytics.irt import ItemBank, probability
from analytics.plausible_values import (
    combine_rubin,
    draw_plausible_values,
    fit_latent_normal,
    grid_log_likelihoods,
    population_mean,
    population_sd,
)


def test_rubin_rules_by_hand():
    estimates, variances = np.array([1.0, 1.2, 0.9, 1.1]), np.array([0.04, 0.05, 0.03, 0.04])
    within, between = variances.mean(), estimates.var(ddof=1)
    total = within + 1.25 * between
    df = 3 * (1 + within / (1.25 * between)) ** 2
    combined = combine_rubin(estimates, variances)
    assert combined.estimate == pytest.approx(1.05)
    assert combined.se == pytest.approx(np.sqrt(total))
    assert combined.df == pytest.approx(df)
    half = stats.t.ppf(0.975, df) * np.sqrt(total)
    assert (combined.ci_low, combined.ci_high) == pytest.approx((1.05 - half, 1.05 + half))
    with pytest.raises(ValueError, match="at least two"):
        combine_rubin([1.0], [0.1])


def _bank(rng, n_items=20):
    return ItemBank.from_arrays(rng.uniform(0.8, 2.0, n_items), rng.normal(0.0, 1.0, n_items),
                                np.full(n_items, 0.2))


def _sample(rng, bank, n, mean, sd):
    theta = rng.normal(mean, sd, n)
    return (rng.random((n, bank.n_items)) < probability(theta, bank)).astype(float)


def test_the_em_fit_recovers_a_large_populations_mean_and_sd():
    rng = np.random.default_rng(8)
    bank = _bank(rng, 40)
    mean, sd = fit_latent_normal(grid_log_likelihoods(_sample(rng, bank, 20_000, -0.7, 1.3),
                                                      bank))
    assert mean == pytest.approx(-0.7, abs=0.04) and sd == pytest.approx(1.3, abs=0.04)


def test_plausible_values_cover_the_true_sd_where_eap_does_not():
    rng = np.random.default_rng(2026)
    bank, n_people, replications = _bank(rng, 12), 300, 500
    # A 61-point grid (step 1/6) keeps 500 replications quick; the draws spread within a step.
    grid = np.linspace(-5.0, 5.0, 61)
    covers = {"pv sd": 0, "pv mean": 0, "eap sd": 0}
    for _ in range(replications):
        responses = _sample(rng, bank, n_people, 0.5, 1.0)
        draws = draw_plausible_values(grid_log_likelihoods(responses, bank, grid), rng,
                                      points=grid)
        sd, mean = population_sd(draws), population_mean(draws)
        covers["pv sd"] += sd.ci_low <= 1.0 <= sd.ci_high
        covers["pv mean"] += mean.ci_low <= 0.5 <= mean.ci_high
        eap_sd = EAPEstimator().estimate(responses, bank).theta.std(ddof=1)
        half = 1.96 * eap_sd / np.sqrt(2 * (n_people - 1))
        covers["eap sd"] += eap_sd - half <= 1.0 <= eap_sd + half
    rates = {k: v / replications for k, v in covers.items()}
    assert abs(rates["pv sd"] - 0.95) <= 0.02, rates
    assert abs(rates["pv mean"] - 0.95) <= 0.02, rates
    assert rates["eap sd"] < 0.5, rates
