"""analytics.ability: EAP, MAP and ML against slow loops, numerical integration, scipy, girth
and catsim."""

from __future__ import annotations

import math

import girth
import numpy as np
import pytest
from catsim.estimation import NumericalSearchEstimator
from catsim.item_bank import ItemBank as CatsimItemBank
from scipy import integrate, optimize

from analytics.ability import (
    INEP_GRID,
    MIRT_LEGACY_GRID,
    PAPER_GRID,
    EAPEstimator,
    MAPEstimator,
    MLEstimator,
    QuadratureGrid,
    log_likelihood_on_grid,
    make_estimator,
)
from analytics.irt import ItemBank, counted_responses, probability


def _bank(seed: int = 0, n_items: int = 45, scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.6, 0.3, n_items), rng.normal(0.8, 1.1, n_items),
                                rng.uniform(0.05, 0.3, n_items), scaling=scaling)


def _simulate(bank: ItemBank, n: int, seed: int = 1, missing: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n)
    responses = (rng.random((n, bank.n_items)) < probability(theta, bank)).astype(float)
    responses[rng.random(responses.shape) < missing] = np.nan
    return responses


def _slow_log_likelihood(pattern, bank: ItemBank, theta: float) -> float:
    total = 0.0
    for u, a, b, c in zip(pattern, bank.a, bank.b, bank.c, strict=True):
        if math.isnan(u) or math.isnan(a) or math.isnan(b) or math.isnan(c):
            continue
        p = c + (1 - c) / (1 + math.exp(-bank.scaling * a * (theta - b)))
        total += math.log(p) if u == 1 else math.log(1 - p)
    return total


def _slow_information(pattern, bank: ItemBank, theta: float) -> float:
    total = 0.0
    for u, a, b, c in zip(pattern, bank.a, bank.b, bank.c, strict=True):
        if not math.isnan(u):
            p = c + (1 - c) / (1 + math.exp(-bank.scaling * a * (theta - b)))
            total += bank.scaling**2 * a**2 * ((p - c) ** 2 / (1 - c) ** 2) * ((1 - p) / p)
    return total


def _slow_eap(pattern, bank: ItemBank, points, mean=0.0, sd=1.0) -> tuple[float, float]:
    # Textbook EAP: products of probabilities, normal density weights, no log-sum-exp.
    weights = [math.exp(-0.5 * ((q - mean) / sd) ** 2 + _slow_log_likelihood(pattern, bank, q))
               for q in points]
    total = sum(weights)
    theta = sum(w * q for w, q in zip(weights, points, strict=True)) / total
    second = sum(w * q * q for w, q in zip(weights, points, strict=True)) / total
    return theta, math.sqrt(second - theta**2)


# --- grids -----------------------------------------------------------------------------------

def test_grid_constants_and_points():
    assert (INEP_GRID.n_quadrature, INEP_GRID.theta_range) == (40, (-4.0, 4.0))
    assert (PAPER_GRID.n_quadrature, PAPER_GRID.theta_range) == (121, (-6.0, 6.0))
    assert (MIRT_LEGACY_GRID.n_quadrature, MIRT_LEGACY_GRID.theta_range) == (61, (-6.0, 6.0))
    np.testing.assert_allclose(INEP_GRID.points, np.linspace(-4, 4, 40))
    assert PAPER_GRID.points[1] - PAPER_GRID.points[0] == pytest.approx(0.1)


def test_gauss_legendre_grid_integrates_polynomials_exactly():
    grid = QuadratureGrid(8, (-2.0, 3.0), rule="gauss-legendre")
    weights = np.exp(grid.log_weights) * 2.5
    assert weights @ grid.points**6 == pytest.approx((3.0**7 - (-2.0) ** 7) / 7, rel=1e-12)


@pytest.mark.parametrize("kwargs", [{"n_quadrature": 1}, {"theta_range": (2.0, 2.0)},
                                    {"theta_range": (3.0, -3.0)}, {"rule": "simpson"}])
def test_grid_validation(kwargs):
    with pytest.raises(ValueError):
        QuadratureGrid(**kwargs)


# --- likelihood on the grid --------------------------------------------------------------------

def test_log_likelihood_on_grid_matches_slow_loop_with_missing_entries():
    bank = ItemBank.from_arrays([1.2, 0.8, np.nan, 2.0], [0.0, -1.0, 0.5, 1.5],
                                [0.2, 0.0, 0.1, 0.15], scaling=1.7)
    responses = np.array([[1, 0, 1, 0], [np.nan, 1, 0, 1], [np.nan] * 4, [1, 1, 1, 1.0]])
    points = np.linspace(-3, 3, 7)
    got = log_likelihood_on_grid(responses, bank, points)
    assert got.shape == (4, 7)
    for i, pattern in enumerate(responses):
        for k, q in enumerate(points):
            assert got[i, k] == pytest.approx(_slow_log_likelihood(pattern, bank, q), rel=1e-12,
                                              abs=1e-12)


def test_log_likelihood_agrees_with_catsim():
    from catsim import irt as catsim_irt

    bank = _bank(2, n_items=20)
    pattern = _simulate(bank, 1, seed=5)[0]
    items = np.column_stack([bank.a, bank.b, bank.c, np.ones(bank.n_items)])
    for q in (-2.0, 0.0, 1.5):
        want = catsim_irt.log_likelihood(q, [bool(u) for u in pattern], items)
        assert log_likelihood_on_grid(pattern, bank, [q])[0, 0] == pytest.approx(want, rel=1e-12)


# --- EAP -------------------------------------------------------------------------------------

@pytest.mark.parametrize("grid", [INEP_GRID, PAPER_GRID, MIRT_LEGACY_GRID])
def test_eap_matches_slow_loop_over_grid_points(grid):
    bank = _bank(3)
    responses = _simulate(bank, 12, seed=4, missing=0.1)
    responses[0] = 1.0
    responses[1] = 0.0
    got = EAPEstimator(grid=grid).estimate(responses, bank)
    for i, pattern in enumerate(responses):
        theta, se = _slow_eap(pattern, bank, grid.points)
        assert got.theta[i] == pytest.approx(theta, abs=1e-12)
        assert got.se[i] == pytest.approx(se, abs=1e-10)


def test_eap_with_non_standard_prior_and_scaling_matches_slow_loop():
    bank = _bank(4, n_items=20, scaling=1.7)
    responses = _simulate(bank, 6, seed=5)
    got = EAPEstimator(grid=PAPER_GRID, prior_mean=0.5, prior_sd=1.5).estimate(responses, bank)
    for i, pattern in enumerate(responses):
        theta, se = _slow_eap(pattern, bank, PAPER_GRID.points, 0.5, 1.5)
        assert got.theta[i] == pytest.approx(theta, abs=1e-12)
        assert got.se[i] == pytest.approx(se, abs=1e-10)


def test_fine_grid_eap_matches_continuous_integral():
    bank = _bank(5, n_items=15)
    responses = _simulate(bank, 3, seed=6)
    fine = QuadratureGrid(2001, (-6.0, 6.0))
    got = EAPEstimator(grid=fine).estimate(responses, bank)
    for i, pattern in enumerate(responses):
        def density(q, power, pattern=pattern):
            return q**power * math.exp(-q * q / 2 + _slow_log_likelihood(pattern, bank, q))

        moments = [integrate.quad(density, -6, 6, args=(k,), epsabs=1e-13, epsrel=1e-12)[0]
                   for k in range(3)]
        theta = moments[1] / moments[0]
        se = math.sqrt(moments[2] / moments[0] - theta**2)
        assert got.theta[i] == pytest.approx(theta, abs=1e-6)
        assert got.se[i] == pytest.approx(se, abs=1e-6)


def test_eap_matches_girth_on_its_gauss_legendre_grid():
    # girth.ability_3pl_eap: 41 Gauss-Legendre nodes on [-4.5, 4.5], N(0, 1) prior, D = 1
    # (girth.utilities.girth_options.default_options); NaN responses contribute a constant.
    bank = _bank(6)
    responses = _simulate(bank, 200, seed=7, missing=0.05)
    girth_theta = girth.ability_3pl_eap(responses.T, bank.b, bank.a, bank.c)
    grid = QuadratureGrid(41, (-4.5, 4.5), rule="gauss-legendre")
    np.testing.assert_allclose(EAPEstimator(grid=grid).estimate(responses, bank).theta,
                               girth_theta, atol=1e-10)


def test_missing_response_equals_removing_the_item():
    bank = _bank(7, n_items=10)
    pattern = _simulate(bank, 1, seed=8)[0]
    with_gap = pattern.copy()
    with_gap[3] = np.nan
    keep = np.arange(10) != 3
    for estimator in (EAPEstimator(grid=PAPER_GRID), MAPEstimator(), MLEstimator()):
        gap = estimator.estimate(with_gap, bank)
        removed = estimator.estimate(pattern[keep], bank.subset(keep))
        assert gap.theta[0] == pytest.approx(removed.theta[0], abs=1e-12)
        assert gap.se[0] == pytest.approx(removed.se[0], abs=1e-12)


def test_item_without_parameters_drops_out():
    bank = _bank(8, n_items=10)
    pattern = _simulate(bank, 1, seed=9)[0]
    abandoned = ItemBank.from_arrays(np.where(np.arange(10) == 4, np.nan, bank.a),
                                     np.where(np.arange(10) == 4, np.nan, bank.b),
                                     np.where(np.arange(10) == 4, np.nan, bank.c))
    keep = np.arange(10) != 4
    both = EAPEstimator().estimate(np.vstack([pattern, 1 - pattern]), abandoned)
    want = EAPEstimator().estimate(np.vstack([pattern[keep], 1 - pattern[keep]]), bank.subset(keep))
    np.testing.assert_allclose(both.theta, want.theta, atol=1e-13)
    np.testing.assert_allclose(both.se, want.se, atol=1e-13)


def test_eap_without_counted_items_is_the_grid_prior():
    bank = ItemBank.from_arrays([1.0, np.nan], [0.0, np.nan], [0.2, np.nan])
    responses = np.array([[np.nan, np.nan], [np.nan, 1.0]])
    got = EAPEstimator(grid=INEP_GRID).estimate(responses, bank)
    np.testing.assert_allclose(got.theta, 0.0, atol=1e-14)
    q = INEP_GRID.points
    w = np.exp(-q**2 / 2)
    np.testing.assert_allclose(got.se, math.sqrt(w @ q**2 / w.sum()), rtol=1e-12)
    shifted = EAPEstimator(grid=INEP_GRID, prior_mean=1.0).estimate(responses, bank)
    w = np.exp(-(q - 1.0) ** 2 / 2)
    np.testing.assert_allclose(shifted.theta, w @ q / w.sum(), rtol=1e-12)


def test_eap_extreme_patterns_are_finite_and_inside_the_grid():
    bank = _bank(9)
    got = EAPEstimator(grid=INEP_GRID).estimate(np.vstack([np.ones(45), np.zeros(45)]), bank)
    assert np.all(np.isfinite(got.theta)) and np.all(np.isfinite(got.se))
    assert -4 < got.theta[1] < got.theta[0] < 4


def test_one_dimensional_responses_are_one_examinee():
    bank = _bank(10, n_items=5)
    got = EAPEstimator().estimate([1, 0, 1, 1, 0], bank)
    assert got.theta.shape == (1,) and got.se.shape == (1,)


def test_scaling_constant_is_the_same_as_scaling_discrimination():
    bank = _bank(11, n_items=20)
    responses = _simulate(bank, 20, seed=12)
    with_d = ItemBank.from_arrays(bank.a, bank.b, bank.c, scaling=1.7)
    folded = ItemBank.from_arrays(bank.a * 1.7, bank.b, bank.c)
    np.testing.assert_allclose(EAPEstimator().estimate(responses, with_d).theta,
                               EAPEstimator().estimate(responses, folded).theta, atol=1e-12)


def test_eap_rejects_bad_prior():
    with pytest.raises(ValueError, match="prior_sd"):
        EAPEstimator(prior_sd=0.0).estimate([1.0], ItemBank.from_arrays([1.0], [0.0]))


# --- MAP and ML against scipy ----------------------------------------------------------------

def _scipy_maximiser(objective, bounds=(-6.0, 6.0)) -> float:
    result = optimize.minimize_scalar(lambda t: -objective(t), bounds=bounds, method="bounded",
                                      options={"xatol": 1e-10})
    return float(result.x)


def test_map_matches_scipy_per_examinee():
    bank = _bank(12, scaling=1.7)
    responses = _simulate(bank, 40, seed=13, missing=0.1)
    responses[0] = 1.0
    responses[1] = 0.0
    got = MAPEstimator(prior_mean=0.2, prior_sd=1.3).estimate(responses, bank)
    for i, pattern in enumerate(responses):
        want = _scipy_maximiser(lambda t, p=pattern: _slow_log_likelihood(p, bank, t)
                                - 0.5 * ((t - 0.2) / 1.3) ** 2)
        assert got.theta[i] == pytest.approx(want, abs=1e-6)
    for i, pattern in enumerate(responses):
        want_se = 1 / math.sqrt(_slow_information(pattern, bank, got.theta[i]) + 1 / 1.3**2)
        assert got.se[i] == pytest.approx(want_se, rel=1e-10)


def test_ml_matches_scipy_per_examinee():
    bank = _bank(14)
    responses = _simulate(bank, 40, seed=15, missing=0.1)
    got = MLEstimator().estimate(responses, bank)
    for i, pattern in enumerate(responses):
        want = _scipy_maximiser(lambda t, p=pattern: _slow_log_likelihood(p, bank, t))
        assert got.theta[i] == pytest.approx(want, abs=1e-6)
        want_se = 1 / math.sqrt(_slow_information(pattern, bank, got.theta[i]))
        assert got.se[i] == pytest.approx(want_se, rel=1e-10)


def test_ml_finds_the_global_maximum_where_a_local_search_can_stop_early():
    # Low scorers on hard 3PL items can have an interior local maximum and a higher likelihood
    # at the lower bound; the grid start picks the global one, so the likelihood at our θ is
    # never below that at scipy's bounded (local) search.
    rng = np.random.default_rng(0)
    bank = ItemBank.from_arrays(rng.lognormal(np.log(2.1) - 0.06, 0.35, 45),
                                rng.normal(1.2, 1.1, 45),
                                np.clip(rng.normal(0.17, 0.05, 45), 0.02, 0.4))
    theta = rng.normal(0, 1, 300)
    responses = (rng.random((300, 45)) < probability(theta, bank)).astype(float)
    got = MLEstimator().estimate(responses, bank).theta
    scipy_theta = np.array([_scipy_maximiser(lambda t, p=p: _slow_log_likelihood(p, bank, t))
                            for p in responses])
    ours = np.array([_slow_log_likelihood(p, bank, t) for p, t in zip(responses, got, strict=True)])
    theirs = np.array([_slow_log_likelihood(p, bank, t)
                       for p, t in zip(responses, scipy_theta, strict=True)])
    assert np.all(ours >= theirs - 1e-9)
    assert np.any(ours > theirs + 1e-3)  # the data set does contain such a pattern


def test_ml_matches_catsim_numerical_search():
    bank = _bank(16, n_items=30)
    responses = _simulate(bank, 25, seed=17)
    mixed = responses[(responses.min(axis=1) == 0) & (responses.max(axis=1) == 1)]
    catsim_bank = CatsimItemBank(np.column_stack([bank.a, bank.b, bank.c, np.ones(30)]))
    estimator = NumericalSearchEstimator(method="bounded")
    got = MLEstimator().estimate(mixed, bank)
    for i, pattern in enumerate(mixed):
        want = estimator.estimate(item_bank=catsim_bank, administered_items=list(range(30)),
                                  response_vector=[bool(u) for u in pattern], est_theta=0.0)
        # catsim leaves scipy's bounded search at its default xatol of 1e-5.
        assert got.theta[i] == pytest.approx(want, abs=1e-4)


def test_ml_extreme_and_empty_patterns():
    bank = _bank(18, n_items=10)
    responses = np.vstack([np.ones(10), np.zeros(10), np.full(10, np.nan)])
    got = MLEstimator(theta_bounds=(-5.0, 5.0)).estimate(responses, bank)
    assert got.theta[0] == 5.0 and got.theta[1] == -5.0 and np.isnan(got.theta[2])
    assert np.isfinite(got.se[0]) and np.isinf(got.se[2])


def test_map_without_counted_items_is_the_prior_mean():
    bank = _bank(19, n_items=5)
    got = MAPEstimator(prior_mean=0.7, prior_sd=2.0).estimate(np.full((2, 5), np.nan), bank)
    np.testing.assert_allclose(got.theta, 0.7, atol=1e-12)
    np.testing.assert_allclose(got.se, 2.0, rtol=1e-12)


def test_estimators_are_vectorised_consistently():
    bank = _bank(20)
    responses = _simulate(bank, 30, seed=21)
    for estimator in (EAPEstimator(), MAPEstimator(), MLEstimator()):
        together = estimator.estimate(responses, bank)
        alone = [estimator.estimate(row, bank) for row in responses[:5]]
        np.testing.assert_allclose(together.theta[:5], [e.theta[0] for e in alone], atol=1e-12)


def test_map_and_ml_reject_bad_bounds():
    bank = _bank(22, n_items=3)
    with pytest.raises(ValueError, match="theta_bounds"):
        MLEstimator(theta_bounds=(1.0, -1.0)).estimate([1, 0, 1], bank)
    with pytest.raises(ValueError, match="theta_bounds"):
        MAPEstimator(theta_bounds=(0.0, np.inf)).estimate([1, 0, 1], bank)


# --- estimator objects -------------------------------------------------------------------------

def test_estimate_is_the_counted_method_on_counted_responses():
    # score_responses calls _estimate_counted on responses it has already split; estimate must
    # give the very same numbers.
    bank = _bank(23)
    responses = _simulate(bank, 10, seed=24)
    data = counted_responses(responses, bank)
    estimators = [EAPEstimator(PAPER_GRID, 0.1, 1.2), MAPEstimator(prior_sd=2.0),
                  MLEstimator((-4.0, 4.0))]
    pairs = [(estimator, estimator._estimate_counted(data)) for estimator in estimators]
    for estimator, want in pairs:
        got = estimator.estimate(responses, bank)
        np.testing.assert_array_equal(got.theta, want.theta)
        np.testing.assert_array_equal(got.se, want.se)
    assert [e.name for e, _ in pairs] == ["eap", "map", "ml"]


def test_make_estimator():
    eap_estimator = make_estimator("eap", n_quadrature=121, theta_range=(-6.0, 6.0))
    assert isinstance(eap_estimator, EAPEstimator) and eap_estimator.grid == PAPER_GRID
    assert make_estimator("eap") == EAPEstimator(INEP_GRID)
    assert make_estimator("map", theta_range=(-5.0, 5.0)).theta_bounds == (-5.0, 5.0)
    assert make_estimator("ml").theta_bounds == (-4.0, 4.0)
    with pytest.raises(ValueError, match="eap, map, ml"):
        make_estimator("wle")
