"""analytics.mode_search: the θ-estimation kernel both estimator families share, checked against
finite differences, scipy's root finder and slow loops, on random 3PL banks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from analytics.ability import MAPEstimator, MLEstimator
from analytics.cat import Answered, CatMAP, CatML, GridLikelihood
from analytics.irt import ItemBank, item_information, probability
from analytics.mode_search import (
    SEARCH_STEP,
    Bracket,
    check_prior,
    check_theta_bounds,
    grid_bracket,
    grid_log_probabilities,
    information_at,
    log_likelihood_derivatives,
    newton_in_bracket,
    normal_log_prior,
    prior_precision,
    search_grid,
)


def _bank(seed: int, n_items: int = 40, scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.6, 0.35, n_items), rng.normal(0.9, 1.2, n_items),
                                rng.uniform(0.0, 0.35, n_items), scaling=scaling)


def _log_likelihood(theta: float, bank: ItemBank, items: np.ndarray, correct: np.ndarray) -> float:
    """Slow log L of one pattern: ``items`` bank indices (repeats allowed), ``correct`` 0/1.

    log Q is log(1 − c) − log(1 + e^z), not log(1 − P): 1 − P loses digits where P is near 1,
    and finite differences of the likelihood would magnify that.
    """
    total = 0.0
    for j, u in zip(items, correct, strict=True):
        z = bank.scaling * bank.a[j] * (theta - bank.b[j])
        if u:
            total += math.log(bank.c[j] + (1.0 - bank.c[j]) / (1.0 + math.exp(-z)))
        else:
            total += math.log1p(-bank.c[j]) - math.log1p(math.exp(z))
    return total


def _log_likelihood_on(points: np.ndarray, bank: ItemBank, items: np.ndarray,
                       correct: np.ndarray) -> np.ndarray:
    """The same log L at many θ (k,) at once, by the textbook formula, shape (k,)."""
    a, b, c = bank.a[items], bank.b[items], bank.c[items]
    z = bank.scaling * a * (points[:, None] - b)
    log_p = np.log(c + (1.0 - c) / (1.0 + np.exp(-z)))
    log_q = np.log1p(-c) - np.logaddexp(0.0, z)
    return np.where(correct, log_p, log_q).sum(axis=1)


def _patterns(bank: ItemBank, n: int, t: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n adaptive-test patterns of t items each (bank indices, with repeats) and their answers."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.3, n)
    items = rng.integers(0, bank.n_items, (n, t))
    p = np.take_along_axis(probability(theta, bank), items, axis=1)
    return items, rng.random((n, t)) < p


# --- derivatives ---------------------------------------------------------------------------

@pytest.mark.parametrize("scaling", [1.0, 1.7])
def test_derivatives_of_gathered_items_match_finite_differences(scaling):
    bank = _bank(1, scaling=scaling)
    items, correct = _patterns(bank, 30, 12, seed=2)
    theta = np.random.default_rng(3).uniform(-3.0, 3.0, 30)
    got = log_likelihood_derivatives(theta, bank, correct, items=items)
    h = 1e-5
    for i in range(30):
        def loglik(t, i=i):
            return _log_likelihood(t, bank, items[i], correct[i])
        score = (loglik(theta[i] + h) - loglik(theta[i] - h)) / (2 * h)
        second = (loglik(theta[i] + 10 * h) - 2 * loglik(theta[i]) + loglik(theta[i] - 10 * h)
                  ) / (10 * h) ** 2
        assert got.score[i] == pytest.approx(score, rel=1e-6, abs=1e-7)
        assert got.second[i] == pytest.approx(second, rel=1e-4, abs=1e-4)
        # The second derivative again, from the analytic score this time: much tighter.
        up = log_likelihood_derivatives(theta[i:i + 1] + h, bank, correct[i:i + 1],
                                        items=items[i:i + 1]).score[0]
        down = log_likelihood_derivatives(theta[i:i + 1] - h, bank, correct[i:i + 1],
                                          items=items[i:i + 1]).score[0]
        assert got.second[i] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-7)
    # Repeated items count once per answer, as in the likelihood above.
    want_info = np.take_along_axis(item_information(theta, bank), items, axis=1).sum(axis=1)
    np.testing.assert_allclose(got.information, want_info, rtol=1e-12)


def test_bank_columns_with_a_counted_mask_equal_the_gathered_items():
    # The whole-test layout (every bank item a column, entries that do not count masked) and the
    # adaptive layout (each row's own items) describe the same likelihood.
    bank = _bank(4)
    rng = np.random.default_rng(5)
    n = 50
    theta = rng.uniform(-4.0, 4.0, n)
    answered = rng.random((n, bank.n_items)) < 0.3
    correct = (rng.random((n, bank.n_items)) < probability(theta, bank)) & answered
    full = log_likelihood_derivatives(theta, bank, correct.astype(float), answered.astype(float))
    for i in range(n):
        items = np.flatnonzero(answered[i])[None, :]
        one = log_likelihood_derivatives(theta[i:i + 1], bank, correct[i, items[0]][None, :],
                                         items=items)
        for got, want in zip(full, one, strict=True):
            assert got[i] == pytest.approx(want[0], rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(
        information_at(theta, bank, answered.astype(float)), full.information)


def test_information_without_counts_is_the_test_information():
    bank = _bank(6)
    theta = np.linspace(-5.0, 5.0, 21)
    items = np.broadcast_to(np.arange(bank.n_items), (21, bank.n_items))
    np.testing.assert_allclose(information_at(theta, bank, items=items),
                               item_information(theta, bank).sum(axis=1), rtol=1e-12)


def test_grid_log_probabilities_are_log_p_and_log_q():
    bank = _bank(7, scaling=1.7)
    points = search_grid((-6.0, 6.0))
    log_p, log_q = grid_log_probabilities(bank, points)
    p = probability(points, bank)
    np.testing.assert_allclose(log_p, np.log(p), rtol=1e-12)
    z = bank.scaling * bank.a * (points[:, None] - bank.b)
    np.testing.assert_allclose(log_q, np.log1p(-bank.c) - np.logaddexp(0.0, z), rtol=1e-12)


# --- grid, bounds and prior ------------------------------------------------------------------

def test_search_grid_spacing_and_bounds():
    points = search_grid((-6.0, 6.0))
    assert points.shape == (121,) and points[0] == -6.0 and points[-1] == 6.0
    assert np.diff(points).max() <= SEARCH_STEP + 1e-12
    assert search_grid((0.0, 0.05)).shape == (3,)
    for bad in [(1.0, 1.0), (2.0, -2.0), (-np.inf, 0.0), (0.0, np.nan)]:
        with pytest.raises(ValueError, match="theta_bounds"):
            check_theta_bounds(bad)
        with pytest.raises(ValueError, match="theta_bounds"):
            search_grid(bad)


def test_normal_log_prior_and_its_checks():
    points = np.linspace(-3.0, 3.0, 7)
    log_prior = normal_log_prior(points, 0.5, 2.0)
    np.testing.assert_allclose(log_prior - log_prior[0],
                               [-0.5 * ((q - 0.5) / 2.0) ** 2 + 0.5 * (3.5 / 2.0) ** 2
                                for q in points], rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(normal_log_prior(points, 0.5, None), np.zeros(7))
    assert prior_precision(2.0) == 0.25 and prior_precision(None) == 0.0
    check_prior(0.0, 1.0)
    with pytest.raises(ValueError, match="prior_mean"):
        check_prior(np.nan, 1.0)
    for sd in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="prior_sd"):
            check_prior(0.0, sd)


def test_grid_bracket_starts_at_the_vertex_of_a_parabola():
    points = np.linspace(-2.0, 2.0, 41)
    peaks = np.array([0.537, -1.234, 2.0, -2.0])
    objective = -((points[:, None] - peaks[None, :]) ** 2)
    objective[:, 2] = points       # increasing: the maximum is the upper end
    objective[:, 3] = -points      # decreasing: the lower end
    bracket = grid_bracket(objective, points)
    np.testing.assert_allclose(bracket.start[:2], peaks[:2], atol=1e-12)
    assert bracket.start[2] == 2.0 and bracket.start[3] == -2.0
    np.testing.assert_allclose(bracket.lower, [0.4, -1.3, 1.9, -2.0], atol=1e-12)
    np.testing.assert_allclose(bracket.upper, [0.6, -1.1, 2.0, -1.9], atol=1e-12)
    # A transposed (n, k) array gives the same bracket.
    again = grid_bracket(np.ascontiguousarray(objective.T).T, points)
    for got, want in zip(again, bracket, strict=True):
        np.testing.assert_array_equal(got, want)


# --- the mode search against scipy -----------------------------------------------------------

def _search(bank: ItemBank, items: np.ndarray, correct: np.ndarray, prior_mean: float,
            prior_sd: float | None, bounds: tuple[float, float] = (-6.0, 6.0)) -> np.ndarray:
    """The kernel alone: grid bracket on the search grid, then the bracketed Newton search."""
    points = search_grid(bounds)
    likelihood = GridLikelihood(bank, points, items.shape[0])
    for step in range(items.shape[1]):
        likelihood.add(slice(None), items[:, step], correct[:, step])
    objective = likelihood.values + normal_log_prior(points, prior_mean, prior_sd)
    bracket = grid_bracket(objective.T, points)
    return newton_in_bracket(
        lambda rows, theta: log_likelihood_derivatives(theta, bank, correct[rows],
                                                       items=items[rows]),
        bracket, prior_mean, prior_precision(prior_sd), max_iter=100, tol=1e-8)


def _scipy_mode(bank: ItemBank, items: np.ndarray, correct: np.ndarray, prior_mean: float,
                prior_sd: float | None, bounds: tuple[float, float] = (-6.0, 6.0)) -> float:
    """The highest mode by brute force: the best point of a 0.001 grid, then brentq on the
    slow objective's derivative (by finite differences) between its neighbours."""
    precision = 0.0 if prior_sd is None else 1.0 / prior_sd**2

    def objective(t: float) -> float:
        return _log_likelihood(t, bank, items, correct) - 0.5 * precision * (t - prior_mean) ** 2

    fine = np.linspace(*bounds, 12001)
    values = (_log_likelihood_on(fine, bank, items, correct)
              - 0.5 * precision * (fine - prior_mean) ** 2)
    best = int(values.argmax())
    if best in (0, fine.shape[0] - 1):
        return float(fine[best])

    def slope(t: float) -> float:
        h = 1e-6
        return (objective(t + h) - objective(t - h)) / (2 * h)

    return optimize.brentq(slope, fine[best - 1], fine[best + 1], xtol=1e-13)


@pytest.mark.parametrize(("seed", "prior_mean", "prior_sd", "t"),
                         [(8, 0.0, 1.0, 20), (9, 0.4, 0.6, 8), (10, 0.0, None, 30),
                          (11, 0.0, None, 45)])
def test_mode_search_matches_a_brute_force_search_with_brentq(seed, prior_mean, prior_sd, t):
    bank = _bank(seed, scaling=1.0 if seed % 2 else 1.7)
    items, correct = _patterns(bank, 40, t, seed=seed + 100)
    got = _search(bank, items, correct, prior_mean, prior_sd)
    for i in range(40):
        want = _scipy_mode(bank, items[i], correct[i], prior_mean, prior_sd)
        assert got[i] == pytest.approx(want, abs=1e-7)


def test_mode_search_converges_to_the_root_of_the_score():
    # The convergence rule stops when a step is below tol or its square below tol/100: the
    # score of the analytic derivatives is then zero to far below tol.
    bank = _bank(12)
    items, correct = _patterns(bank, 200, 25, seed=13)
    got = _search(bank, items, correct, 0.0, 1.0)
    derivs = log_likelihood_derivatives(got, bank, correct, items=items)
    score = derivs.score - got
    assert np.abs(score / (derivs.information + 1.0)).max() < 1e-9


def test_ml_of_a_constant_pattern_ends_at_the_bound():
    bank = _bank(14)
    items = np.tile(np.arange(10), (2, 1))
    correct = np.array([[True] * 10, [False] * 10])
    np.testing.assert_array_equal(_search(bank, items, correct, 0.0, None, (-4.0, 4.0)),
                                  [4.0, -4.0])


def test_newton_stays_inside_its_bracket():
    # A bracket that does not hold the mode: the search ends at the bracket end nearest to it.
    bank = _bank(15)
    items, correct = _patterns(bank, 20, 30, seed=16)
    mode = _search(bank, items, correct, 0.0, 1.0)
    lower, upper = mode + 0.5, mode + 0.7
    got = newton_in_bracket(
        lambda rows, theta: log_likelihood_derivatives(theta, bank, correct[rows],
                                                       items=items[rows]),
        Bracket(mode + 0.6, lower, upper), 0.0, 1.0, max_iter=100, tol=1e-8)
    np.testing.assert_allclose(got, lower, atol=1e-7)


# --- both estimator families, one kernel -----------------------------------------------------

@pytest.mark.parametrize("family", ["map", "ml"])
def test_whole_test_and_adaptive_estimators_agree_on_the_same_answers(family):
    bank = _bank(17, n_items=60)
    rng = np.random.default_rng(18)
    n, t = 300, 15
    items = np.argsort(rng.random((n, bank.n_items)), axis=1)[:, :t]
    correct = rng.random((n, t)) < np.take_along_axis(
        probability(rng.normal(0, 1, n), bank), items, axis=1)
    responses = np.full((n, bank.n_items), np.nan)
    np.put_along_axis(responses, items, correct.astype(float), axis=1)
    whole = (MAPEstimator() if family == "map" else MLEstimator()).estimate(responses, bank)
    cat = CatMAP() if family == "map" else CatML(constant_patterns="bound")
    likelihood = GridLikelihood(bank, cat.points, n)
    for step in range(t):
        likelihood.add(slice(None), items[:, step], correct[:, step])
    adaptive = cat.estimate(Answered(items, correct, likelihood.values, np.zeros(n)), bank)
    np.testing.assert_allclose(adaptive.theta, whole.theta, rtol=0, atol=1e-9)
    np.testing.assert_allclose(adaptive.se, whole.se, rtol=1e-9)
