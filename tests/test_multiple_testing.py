"""analytics.multiple_testing: Benjamini–Hochberg q-values and Holm's adjustment."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control
from statsmodels.stats.multitest import multipletests

from analytics.multiple_testing import benjamini_hochberg, holm

HAND_P = np.array([0.01, 0.04, 0.03, 0.005])


def test_bh_by_hand():
    # Sorted: 0.005 (rank 1), 0.01 (2), 0.03 (3), 0.04 (4); m·p/rank = 0.02, 0.02, 0.04, 0.04,
    # already non-decreasing, so those are the q-values.
    np.testing.assert_allclose(benjamini_hochberg(HAND_P), [0.02, 0.04, 0.04, 0.02])


def test_bh_step_up_lowers_an_earlier_q():
    # m·p/rank = 0.03, 0.045, 0.035: the running minimum from the top gives rank 2 the 0.035
    # of rank 3 (rejecting rank 3 at 0.035 rejects rank 2 too).
    np.testing.assert_allclose(benjamini_hochberg([0.01, 0.03, 0.035]), [0.03, 0.035, 0.035])


def test_holm_by_hand():
    # (m − j + 1)·p = 4·0.005, 3·0.01, 2·0.03, 1·0.04 = 0.02, 0.03, 0.06, 0.04; running max.
    np.testing.assert_allclose(holm(HAND_P), [0.03, 0.06, 0.06, 0.02])


@pytest.mark.parametrize("size", [1, 2, 7, 50, 1000])
def test_bh_matches_scipy_on_random_p_values(size):
    rng = np.random.default_rng(size)
    # A mixture of nulls (uniform) and signals (near 0), with a few exact ties.
    p = np.where(rng.random(size) < 0.3, rng.random(size) * 1e-3, rng.random(size))
    p[: size // 10] = p[0]
    np.testing.assert_allclose(benjamini_hochberg(p), false_discovery_control(p, method="bh"),
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("size", [1, 3, 40, 500])
def test_holm_and_bh_match_statsmodels(size):
    rng = np.random.default_rng(100 + size)
    p = rng.random(size) ** 3
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], rtol=1e-12)
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1],
                               rtol=1e-12)


def test_two_dimensional_input_is_one_family():
    rng = np.random.default_rng(3)
    p = rng.random((4, 6)) ** 2
    q = benjamini_hochberg(p)
    assert q.shape == (4, 6)
    np.testing.assert_allclose(q.ravel(), false_discovery_control(p.ravel(), method="bh"))


def test_nan_stays_nan_and_is_not_counted():
    p = np.array([np.nan, 0.01, 0.04, np.nan, 0.03, 0.005])
    q = benjamini_hochberg(p)
    assert np.isnan(q[[0, 3]]).all()
    # m = 4 (the finite ones), not 6: the same q-values as the hand example without NaN.
    np.testing.assert_allclose(q[[1, 2, 4, 5]], [0.02, 0.04, 0.04, 0.02])
    h = holm(p)
    assert np.isnan(h[[0, 3]]).all()
    np.testing.assert_allclose(h[[1, 2, 4, 5]], [0.03, 0.06, 0.06, 0.02])


def test_all_nan_and_empty():
    assert np.isnan(benjamini_hochberg([np.nan, np.nan])).all()
    assert np.isnan(holm([np.nan])).all()
    assert benjamini_hochberg([]).shape == (0,)


def test_properties_on_random_input():
    rng = np.random.default_rng(11)
    p = rng.random(300) ** 4
    for adjusted in (benjamini_hochberg(p), holm(p)):
        assert (adjusted >= p - 1e-15).all()
        assert (adjusted <= 1.0).all()
        order = np.argsort(p)
        assert (np.diff(adjusted[order]) >= -1e-15).all()
    # Holm controls the stronger error rate, so it never rejects more than BH.
    assert (holm(p) >= benjamini_hochberg(p) - 1e-15).all()


@pytest.mark.parametrize("bad", [[0.1, 1.5], [-0.01, 0.2], [np.inf, 0.1]])
def test_rejects_values_outside_unit_interval(bad):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        benjamini_hochberg(bad)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm(bad)
