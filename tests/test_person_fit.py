"""analytics.person_fit: l_z and l_z* against hand values, slow loops and simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analytics.ability import EAPEstimator, MAPEstimator, MLEstimator
from analytics.irt import ItemBank, probability
from analytics.person_fit import lz, lz_star


def _bank(seed: int = 0, n_items: int = 45, scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.6, 0.3, n_items), rng.normal(0.3, 1.0, n_items),
                                rng.uniform(0.05, 0.25, n_items), scaling=scaling)


def _simulate(bank: ItemBank, n: int, seed: int, missing: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n)
    responses = (rng.random((n, bank.n_items)) < probability(theta, bank)).astype(float)
    responses[rng.random(responses.shape) < missing] = np.nan
    return responses


def _slow_p(theta: float, a: float, b: float, c: float, d: float) -> float:
    return c + (1 - c) / (1 + math.exp(-d * a * (theta - b)))


def _counted_items(pattern, bank):
    for u, a, b, c in zip(pattern, bank.a, bank.b, bank.c, strict=True):
        if not any(math.isnan(x) for x in (u, a, b, c)):
            yield u, a, b, c


def _slow_lz(pattern, theta: float, bank: ItemBank) -> float:
    """l_z term by term, as docs/methods.md (Person fit) writes it."""
    l0 = e = v = 0.0
    for u, a, b, c in _counted_items(pattern, bank):
        p = _slow_p(theta, a, b, c, bank.scaling)
        q = 1 - p
        l0 += u * math.log(p) + (1 - u) * math.log(q)
        e += p * math.log(p) + q * math.log(q)
        v += p * q * math.log(p / q) ** 2
    return (l0 - e) / math.sqrt(v) if v > 0 else math.nan


def _slow_lz_star(pattern, theta: float, bank: ItemBank, r0: float) -> float:
    """Magis, Raîche & Béland (2012), with P' by central differences."""
    h = 1e-6
    rows = []
    for u, a, b, c in _counted_items(pattern, bank):
        p = _slow_p(theta, a, b, c, bank.scaling)
        slope = (_slow_p(theta + h, a, b, c, bank.scaling)
                 - _slow_p(theta - h, a, b, c, bank.scaling)) / (2 * h)
        rows.append((u, p, 1 - p, slope, math.log(p / (1 - p)), slope / (p * (1 - p))))
    w_sum = sum((u - p) * w for u, p, _, _, w, _ in rows)
    c_n = sum(d * w for _, _, _, d, w, _ in rows) / sum(d * r for _, _, _, d, _, r in rows)
    tau = sum((w - c_n * r) ** 2 * p * q for _, p, q, _, w, r in rows)
    return (w_sum + c_n * r0) / math.sqrt(tau)


# --- l_z -------------------------------------------------------------------------------------

def test_lz_two_items_by_hand():
    # 2PL, a = 1, b = ∓1, θ = 0: P1 = e/(1+e), P2 = 1/(1+e), so log(P/Q) = +1 and −1 exactly.
    # Pattern (0, 1) misses the easy item and gets the hard one:
    #   l0 − E = Σ (u − P) log(P/Q) = −P1 − (1 − P2) = −2 P1,   V = Σ P Q · 1 = 2 P1 Q1,
    #   l_z = −2 P1 / sqrt(2 P1 Q1) = −sqrt(2 P1/Q1) = −sqrt(2e).
    bank = ItemBank.from_arrays([1.0, 1.0], [-1.0, 1.0])
    got = lz([[0.0, 1.0], [1.0, 0.0]], [0.0, 0.0], bank)
    assert got[0] == pytest.approx(-math.sqrt(2 * math.e), rel=1e-13)
    # The expected pattern (1, 0): l0 − E = (1 − P1) + P2 = 2 Q1, so l_z = +sqrt(2/e).
    assert got[1] == pytest.approx(math.sqrt(2 / math.e), rel=1e-13)


def test_lz_matches_slow_loop_with_missing_and_abandoned_items():
    bank = _bank(1, n_items=20, scaling=1.7)
    a = bank.a.copy()
    a[[2, 7]] = np.nan
    bank = ItemBank.from_arrays(a, bank.b, bank.c, scaling=1.7)
    responses = _simulate(ItemBank.from_arrays(np.nan_to_num(a, nan=1.0), bank.b, bank.c, 1.7),
                          30, seed=2, missing=0.1)
    theta = np.random.default_rng(3).normal(0, 1.2, 30)
    got = lz(responses, theta, bank)
    for i in range(30):
        assert got[i] == pytest.approx(_slow_lz(responses[i], theta[i], bank), rel=1e-10,
                                       abs=1e-12)


def test_lz_missing_response_equals_removing_the_item():
    bank = _bank(4, n_items=12)
    pattern = _simulate(bank, 1, seed=5)[0]
    gap = pattern.copy()
    gap[5] = np.nan
    keep = np.arange(12) != 5
    assert lz(gap, [0.3], bank)[0] == pytest.approx(lz(pattern[keep], [0.3], bank.subset(keep))[0],
                                                    rel=1e-13)


def test_lz_is_nan_without_counted_items():
    bank = ItemBank.from_arrays([1.0, np.nan], [0.0, np.nan], [0.2, np.nan])
    got = lz([[np.nan, 1.0], [1.0, 0.0]], [0.0, 0.0], bank)
    assert np.isnan(got[0]) and np.isfinite(got[1])


def test_lz_rejects_theta_of_the_wrong_shape():
    with pytest.raises(ValueError, match="theta"):
        lz(np.zeros((3, 2)), [0.0, 0.0], ItemBank.from_arrays([1, 1], [0, 0]))


# --- l_z* ------------------------------------------------------------------------------------

def test_lz_star_at_ml_theta_matches_slow_loop():
    bank = _bank(6, n_items=30, scaling=1.7)
    responses = _simulate(bank, 25, seed=7, missing=0.1)
    theta = MLEstimator().estimate(responses, bank).theta
    got = lz_star(responses, theta, bank)
    for i in range(25):
        assert got[i] == pytest.approx(_slow_lz_star(responses[i], theta[i], bank, 0.0),
                                       rel=1e-6, abs=1e-8)


def test_lz_star_at_map_theta_matches_slow_loop_with_prior_term():
    bank = _bank(8, n_items=30)
    responses = _simulate(bank, 25, seed=9)
    theta = MAPEstimator(prior_mean=0.3, prior_sd=1.4).estimate(responses, bank).theta
    got = lz_star(responses, theta, bank, prior_mean=0.3, prior_sd=1.4)
    for i in range(25):
        r0 = (0.3 - theta[i]) / 1.4**2
        assert got[i] == pytest.approx(_slow_lz_star(responses[i], theta[i], bank, r0),
                                       rel=1e-6, abs=1e-8)


def test_map_theta_solves_the_estimating_equation_with_r0():
    # Snijders' θ̂ solves Σ (u − P) r_i + r0(θ̂) = 0; with r0 = (μ − θ)/σ² that is the MAP.
    bank = _bank(10, n_items=30)
    pattern = _simulate(bank, 1, seed=11)[0]
    theta = MAPEstimator(prior_mean=0.3, prior_sd=1.4).estimate(pattern, bank).theta[0]
    h = 1e-6
    total = (0.3 - theta) / 1.4**2
    for u, a, b, c in _counted_items(pattern, bank):
        p = _slow_p(theta, a, b, c, 1.0)
        slope = (_slow_p(theta + h, a, b, c, 1.0) - _slow_p(theta - h, a, b, c, 1.0)) / (2 * h)
        total += (u - p) * slope / (p * (1 - p))
    assert total == pytest.approx(0.0, abs=1e-7)


def test_lz_star_numerator_at_ml_theta_is_that_of_lz():
    bank = _bank(12, n_items=20)
    responses = _simulate(bank, 10, seed=13)
    theta = MLEstimator().estimate(responses, bank).theta
    ratio = lz(responses, theta, bank) / lz_star(responses, theta, bank)
    assert np.all(ratio > 0)


def test_lz_star_is_standard_normal_for_well_fitting_examinees_at_ml_theta():
    bank = _bank(14)
    responses = _simulate(bank, 3000, seed=15)
    ml = MLEstimator().estimate(responses, bank)
    interior = np.abs(ml.theta) < 5.9
    star = lz_star(responses, ml.theta, bank)[interior]
    plain = lz(responses, ml.theta, bank)[interior]
    # Short 3PL tests leave l_z* slightly right-shifted (Snijders' result is asymptotic).
    assert abs(star.mean()) < 0.2
    assert 0.85 < star.var() < 1.15
    # Plugging in θ̂ shrinks l_z's variance; the correction restores it.
    assert plain.var() < star.var()


def test_lz_star_is_nan_with_a_single_counted_item():
    # One item: w̃ = w − (P'w / P'r)·r ≡ 0, so the corrected variance is 0.
    bank = ItemBank.from_arrays([1.3, 0.9], [0.2, -0.5], [0.2, 0.1])
    got = lz_star([[1.0, np.nan], [0.0, 1.0]], [0.4, 0.4], bank)
    assert np.isnan(got[0]) and np.isfinite(got[1])


def test_lz_star_prior_sd_must_be_positive():
    with pytest.raises(ValueError, match="prior_sd"):
        lz_star([[1.0, 0.0]], [0.0], ItemBank.from_arrays([1, 1], [0, 0]), prior_sd=-1.0)


def test_lz_star_at_eap_theta_is_finite():
    bank = _bank(16)
    responses = _simulate(bank, 50, seed=17)
    responses[0] = 1.0
    theta = EAPEstimator().estimate(responses, bank).theta
    assert np.all(np.isfinite(lz_star(responses, theta, bank, prior_sd=1.0)))
