"""Pooling over prompt variants honestly: the DerSimonian–Laird random-effects pool against
statsmodels' meta-analysis (an independent implementation), equal to the fixed-effect pool
when the variants agree and wider when they disagree; a variant's repetitions as one cluster."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import combine_effects

from analytics.populations import cluster_estimate, pool_inverse_variance, pool_random_effects


@pytest.mark.parametrize("seed", range(8))
def test_random_effects_pool_equals_statsmodels_dersimonian_laird(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 12))
    se = rng.uniform(0.05, 0.4, k)
    theta = rng.normal(0.5, rng.uniform(0.0, 0.6), k) + rng.normal(0.0, se)
    reference = combine_effects(theta, se ** 2, method_re="dl")
    ours = pool_random_effects(theta, se)
    if reference.tau2 > 0:
        assert ours.tau2 == pytest.approx(reference.tau2, rel=1e-10)
        assert ours.theta == pytest.approx(reference.mean_effect_re, rel=1e-10)
        assert ours.se == pytest.approx(reference.sd_eff_w_re, rel=1e-10)
    else:  # statsmodels keeps a negative moment estimate; DerSimonian–Laird truncates at 0
        assert ours.tau2 == 0.0
        assert ours.theta == pytest.approx(reference.mean_effect_fe, rel=1e-10)
        assert ours.se == pytest.approx(reference.sd_eff_w_fe, rel=1e-10)
    assert ours.n == k


def test_agreeing_variants_pool_as_a_fixed_effect():
    theta = np.array([1.00, 1.02, 0.98, 1.01, 0.99])
    se = np.full(5, 0.2)  # far more uncertainty than the variants' spread: Q < k − 1
    random, fixed = pool_random_effects(theta, se), pool_inverse_variance(theta, se)
    assert random.tau2 == 0.0
    assert (random.theta, random.se, random.ci_low, random.ci_high) == (
        fixed.theta, fixed.se, fixed.ci_low, fixed.ci_high)


def test_disagreeing_variants_widen_the_interval():
    theta = np.array([0.2, 1.4, 0.6, 1.9, -0.3])
    se = np.full(5, 0.05)
    random, fixed = pool_random_effects(theta, se), pool_inverse_variance(theta, se)
    assert random.tau2 > 0.5
    assert random.ci_high - random.ci_low > 5 * (fixed.ci_high - fixed.ci_low)
    # One variant (or none usable) leaves nothing to disagree with.
    assert pool_random_effects([0.3], [0.1]).tau2 == 0.0
    assert pool_random_effects([np.nan], [0.1]).n == 0


def test_a_variants_repetitions_count_as_one_measurement():
    theta, se = cluster_estimate([0.4, 0.6, 0.5, np.nan], [0.3, 0.4, 0.3, 0.2])
    assert theta == pytest.approx(0.5)
    assert se == pytest.approx(np.sqrt((0.09 + 0.16 + 0.09) / 3))
    # Thirty identical repetitions are one test, not thirty: the SE does not shrink.
    assert cluster_estimate(np.full(30, 1.0), np.full(30, 0.25))[1] == pytest.approx(0.25)
    assert np.isnan(cluster_estimate([np.nan], [0.1])[0])
