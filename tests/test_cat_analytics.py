"""analytics.cat: selectors, estimators, stopping rules, lockstep simulation, noise, overlap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analytics import EAPEstimator, ItemBank, MAPEstimator, MLEstimator, QuadratureGrid
from analytics.cat import (
    CatEAP,
    CatMAP,
    CatML,
    FixedLength,
    MaxInformation,
    Randomesque,
    RandomItems,
    StandardErrorTarget,
    flip_labels,
    jaccard,
    jaccard_matrix,
    length_to_reach,
    mean_by_step,
    mse_by_step,
    nearest_curve,
    noise_curves,
    noise_grid,
    simulate_cat,
    simulation_study,
    steps_within,
    study_table,
)
from analytics.cat.selectors import available_information
from tests.float_support import picks_a_maximum


def _bank(n_items: int = 60, seed: int = 0, scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.4, 0.3, n_items), rng.normal(0.0, 1.2, n_items),
                                rng.uniform(0.05, 0.25, n_items), scaling=scaling)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# --- A hand-worked three-item CAT ------------------------------------------------------------

def test_three_item_cat_worked_by_hand():
    """2PL items (a, b): 0 = (1, 0), 1 = (2, 1), 2 = (0.5, −1); EAP on the grid {−1, 0, 1} with
    a N(0, 1) prior; start θ = 0; the simulee answers right, wrong, right.

    At θ = 0, I = a²PQ is 0.25, 4·σ(−2)σ(2) ≈ 0.420 and 0.25·σ(0.5)σ(−0.5) ≈ 0.059: item 1.
    After a correct answer the posterior weights φ(q)·σ(2(q − 1)) give θ̂ ≈ 0.675, where item 0
    (I ≈ 0.224) beats item 2 (I ≈ 0.053). Item 2 is all that is left for the third step.
    """
    bank = ItemBank.from_arrays([1.0, 2.0, 0.5], [0.0, 1.0, -1.0])
    grid = QuadratureGrid(3, (-1.0, 1.0))
    draws = np.array([[0.0, 1.0, 0.0]])  # P ≥ 0 always (right), P ≥ 1 never (wrong)
    paths = simulate_cat(bank, [0.3], MaxInformation(), CatEAP(grid=grid), FixedLength(3),
                         answer_draws=draws)
    assert paths.items[0].tolist() == [1, 0, 2]
    assert paths.correct[0].tolist() == [True, False, True]

    points = [-1.0, 0.0, 1.0]
    prior = [math.exp(-0.5 * q * q) for q in points]
    items = [(1.0, 0.0), (2.0, 1.0), (0.5, -1.0)]
    likelihood = [1.0, 1.0, 1.0]
    expected_theta, expected_se = [], []
    for item, right in zip([1, 0, 2], [True, False, True], strict=True):
        a, b = items[item]
        for k, q in enumerate(points):
            p = _logistic(a * (q - b))
            likelihood[k] *= p if right else 1.0 - p
        w = [prior[k] * likelihood[k] for k in range(3)]
        mean = sum(wk * q for wk, q in zip(w, points, strict=True)) / sum(w)
        second = sum(wk * q * q for wk, q in zip(w, points, strict=True)) / sum(w)
        expected_theta.append(mean)
        expected_se.append(math.sqrt(second - mean**2))
    np.testing.assert_allclose(paths.theta[0], [0.0, *expected_theta], rtol=1e-12)
    np.testing.assert_allclose(paths.se[0, 1:], expected_se, rtol=1e-12)
    assert expected_theta[0] == pytest.approx(0.6746, abs=1e-4)


# --- Estimators against analytics.ability -------------------------------------------------------

def _matrix(paths, step: int, n_items: int) -> np.ndarray:
    """The response matrix (n, n_items) of the first ``step`` answers, NaN elsewhere."""
    matrix = np.full((paths.items.shape[0], n_items), np.nan)
    rows = np.arange(paths.items.shape[0])
    for t in range(step):
        matrix[rows, paths.items[:, t]] = paths.correct[:, t]
    return matrix


@pytest.mark.parametrize("cat_estimator, reference", [
    (CatEAP(), EAPEstimator()),
    (CatEAP(grid=QuadratureGrid(121, (-6.0, 6.0)), prior_mean=0.5, prior_sd=1.5),
     EAPEstimator(grid=QuadratureGrid(121, (-6.0, 6.0)), prior_mean=0.5, prior_sd=1.5)),
    (CatMAP(), MAPEstimator()),
    (CatML(constant_patterns="bound"), MLEstimator()),
])
def test_every_step_matches_the_full_matrix_estimators(cat_estimator, reference):
    bank = _bank(scaling=1.7)
    theta0 = np.random.default_rng(3).normal(size=300)
    paths = simulate_cat(bank, theta0, MaxInformation(), cat_estimator, FixedLength(12), seed=4)
    for step in (1, 2, 5, 12):
        expected = reference.estimate(_matrix(paths, step, bank.n_items), bank)
        np.testing.assert_allclose(paths.theta[:, step], expected.theta, atol=1e-6)
        np.testing.assert_allclose(paths.se[:, step], expected.se, rtol=1e-5)


def test_ml_dodd_rule_halves_the_distance_to_the_extreme_difficulty():
    bank = _bank()
    # Always right (draw 0), then always wrong (draw 1) after three items.
    draws = np.array([[0.0, 0.0, 0.0, 1.0]])
    paths = simulate_cat(bank, [0.0], MaxInformation(), CatML(), FixedLength(4),
                         answer_draws=draws, start_theta=0.2)
    b_max = bank.b.max()
    expected = [0.2]
    for _ in range(3):
        expected.append(expected[-1] + (b_max - expected[-1]) / 2)
    np.testing.assert_allclose(paths.theta[0, :4], expected, rtol=1e-14)
    # The fourth answer makes the pattern mixed: the ML takes over.
    mixed = MLEstimator().estimate(_matrix(paths, 4, bank.n_items), bank)
    assert paths.theta[0, 4] == pytest.approx(mixed.theta[0], abs=1e-6)


def test_ml_bound_rule_puts_constant_patterns_at_the_bounds():
    bank = _bank()
    paths = simulate_cat(bank, [0.0, 0.0], MaxInformation(),
                         CatML(theta_bounds=(-5.0, 4.0), constant_patterns="bound"),
                         FixedLength(3), answer_draws=np.array([[0.0] * 3, [1.0] * 3]))
    np.testing.assert_allclose(paths.theta[:, 1:], [[4.0] * 3, [-5.0] * 3])


# --- Selectors --------------------------------------------------------------------------------

def test_max_information_never_repeats_an_item_and_picks_the_argmax():
    bank = _bank(n_items=15)
    paths = simulate_cat(bank, np.linspace(-2, 2, 50), MaxInformation(), CatEAP(),
                         FixedLength(15), seed=1)
    for row in paths.items:
        assert sorted(row.tolist()) == list(range(15))
    step = 4
    theta = paths.theta[:, step]
    info = np.array([[bank.a[j] ** 2 * _info_factor(t, bank, j) for j in range(15)]
                     for t in theta])
    for i in range(50):
        info[i, paths.items[i, :step]] = -1.0
    # The information is recomputed here by another route: a near-tie may go either way.
    assert picks_a_maximum(info, paths.items[:, step]).all()


def _info_factor(theta: float, bank: ItemBank, j: int) -> float:
    """(P − c)²/(1 − c)² · Q/P at θ (D = 1): the Fisher information over a²."""
    c = bank.c[j]
    p = c + (1 - c) * _logistic(bank.a[j] * (theta - bank.b[j]))
    return (p - c) ** 2 / (1 - c) ** 2 * (1 - p) / p


def test_randomesque_draws_uniformly_among_the_k_most_informative():
    bank = _bank(n_items=30)
    theta = np.full(20_000, 0.3)
    available = np.ones((20_000, 30), dtype=bool)
    available[:, :5] = False
    chosen = Randomesque(k=4).select(theta, available, bank, np.random.default_rng(0))
    info = available_information(theta[:1], available[:1], bank)[0]
    top = set(np.argsort(-info)[:4].tolist())
    assert set(np.unique(chosen).tolist()) == top
    counts = np.bincount(chosen, minlength=30)[sorted(top)]
    # Each of the 4 has probability 1/4: counts within 5 binomial SDs of 5,000.
    assert np.all(np.abs(counts - 5000) < 5 * math.sqrt(20_000 * 0.25 * 0.75))


def test_randomesque_with_fewer_items_left_than_k_takes_only_available_ones():
    bank = _bank(n_items=6)
    available = np.zeros((1000, 6), dtype=bool)
    available[:, [1, 4]] = True
    chosen = Randomesque(k=5).select(np.zeros(1000), available, bank, np.random.default_rng(2))
    assert set(chosen.tolist()) == {1, 4}


def test_random_items_are_uniform_over_the_available():
    available = np.ones((30_000, 3), dtype=bool)
    available[:, 0] = False
    chosen = RandomItems().select(np.zeros(30_000), available, _bank(n_items=3),
                                  np.random.default_rng(0))
    counts = np.bincount(chosen, minlength=3)
    assert counts[0] == 0
    assert abs(counts[1] - 15_000) < 5 * math.sqrt(30_000 * 0.25)


# --- Stopping ---------------------------------------------------------------------------------

def test_se_target_stops_each_simulee_at_its_first_step_below_the_target():
    bank = _bank(n_items=80)
    theta0 = np.random.default_rng(5).normal(size=400)
    paths = simulate_cat(bank, theta0, MaxInformation(), CatEAP(),
                         StandardErrorTarget(0.45, max_items=25), seed=2)
    free = simulate_cat(bank, theta0, MaxInformation(), CatEAP(), FixedLength(25), seed=2)
    below = free.se[:, 1:] < 0.45
    expected = np.where(below.any(axis=1), below.argmax(axis=1) + 1, 25)
    np.testing.assert_array_equal(paths.length, expected)
    assert 1 < len(np.unique(paths.length))
    # Up to its stop every path is the fixed-length one; after it, values are carried.
    for i in range(400):
        n = paths.length[i]
        np.testing.assert_array_equal(paths.items[i, :n], free.items[i, :n])
        assert np.all(paths.items[i, n:] == -1)
        np.testing.assert_allclose(paths.theta[i, n:], paths.theta[i, n])


# --- Simulation study facts -------------------------------------------------------------------

def test_mse_falls_with_the_step_and_cat_beats_random_forms():
    bank = _bank(n_items=150, seed=7)
    theta0 = np.random.default_rng(11).normal(size=3000)
    cat = simulate_cat(bank, theta0, MaxInformation(), CatEAP(), FixedLength(20), seed=3)
    rnd = simulate_cat(bank, theta0, RandomItems(), CatEAP(), FixedLength(20), seed=3)
    mse_cat, mse_random = mse_by_step(cat.theta, theta0), mse_by_step(rnd.theta, theta0)
    assert np.all(np.diff(mse_cat[1:]) < 0.0)
    assert mse_cat[20] < 0.5 * mse_cat[2]
    assert np.all(mse_cat[2:] < mse_random[2:])
    target = mse_cat[10]
    assert length_to_reach(mse_cat, target) == 10
    assert length_to_reach(mse_random, target) in (None, *range(11, 21))


def test_mse_by_step_by_hand():
    path = np.array([[0.0, 1.0, 2.0], [0.0, -1.0, 0.5]])
    np.testing.assert_allclose(mse_by_step(path, [1.0, 0.0]), [0.5, 0.5, 0.625])


def test_length_to_reach_is_where_the_curve_stays_below_the_target():
    assert length_to_reach([0.1, 0.9, 0.5, 0.2], 0.5) == 2
    assert length_to_reach([9.0, 0.4, 0.9, 0.3, 0.2], 0.5) == 3  # the early dip does not count
    assert length_to_reach([0.1, 0.3, 0.2], 0.5) == 1
    assert length_to_reach([0.1, 0.9, 0.8], 0.5) is None
    assert length_to_reach([0.1, 0.2, 0.8], 0.5) is None


# --- Guess and slip ---------------------------------------------------------------------------

def test_guess_and_slip_zero_reproduce_the_noiseless_simulation():
    bank = _bank()
    theta0 = np.random.default_rng(1).normal(size=200)
    plain = simulate_cat(bank, theta0, Randomesque(3), CatMAP(), FixedLength(10), seed=9)
    zero = simulate_cat(bank, theta0, Randomesque(3), CatMAP(), FixedLength(10), seed=9,
                        guess=0.0, slip=0.0)
    np.testing.assert_array_equal(plain.items, zero.items)
    np.testing.assert_array_equal(plain.correct, zero.correct)
    np.testing.assert_array_equal(plain.theta, zero.theta)
    noisy = simulate_cat(bank, theta0, Randomesque(3), CatMAP(), FixedLength(10), seed=9,
                         guess=0.1, slip=0.3)
    assert not np.array_equal(plain.correct, noisy.correct)


def test_flip_labels_flip_at_the_guess_and_slip_rates():
    rng = np.random.default_rng(0)
    truth = rng.random(200_000) < 0.5
    observed = flip_labels(truth, 0.1, 0.3, rng.random(200_000))
    guessed = observed[~truth].mean()
    slipped = 1.0 - observed[truth].mean()
    assert abs(guessed - 0.1) < 5 * math.sqrt(0.1 * 0.9 / (~truth).sum())
    assert abs(slipped - 0.3) < 5 * math.sqrt(0.3 * 0.7 / truth.sum())
    with pytest.raises(ValueError, match="guess"):
        flip_labels(truth, 1.5, 0.0, rng.random(200_000))


def test_slip_raises_the_standard_error_curve_and_nearest_curve_finds_it():
    bank = _bank(n_items=120)
    theta0 = np.random.default_rng(2).normal(size=1000)
    curves = {}
    for guess, slip in [(0.0, 0.0), (0.1, 0.3), (0.3, 0.1)]:
        paths = simulate_cat(bank, theta0, MaxInformation(), CatEAP(), FixedLength(15), seed=4,
                             guess=guess, slip=slip)
        curves[(guess, slip)] = mean_by_step(paths.se)
    assert np.isnan(curves[(0.0, 0.0)][0])  # before the first item the SE is infinite
    assert curves[(0.1, 0.3)][15] > curves[(0.0, 0.0)][15]
    model = curves[(0.1, 0.3)] + 0.001
    assert nearest_curve(model, curves) == (0.1, 0.3)
    assert nearest_curve([np.nan], curves) is None


# --- Overlap and convergence ------------------------------------------------------------------

def test_jaccard_by_hand():
    assert jaccard([1, 2, 3], [2, 3, 4]) == pytest.approx(2 / 4)
    assert jaccard([1, 1, 2], [2]) == pytest.approx(1 / 2)
    assert math.isnan(jaccard([], []))
    matrix = jaccard_matrix([[0, 1, 2], [1, 2, 3], [5]], n_items=6)
    np.testing.assert_allclose(matrix, [[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])


def test_steps_within_finds_the_step_from_which_the_path_stays_inside():
    path = np.array([[0.0, 2.0, 1.1, 0.5, 1.05, 1.0],
                     [0.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                     [0.0, 1.0, 1.0, 1.0, 1.0, 3.0]])
    np.testing.assert_array_equal(steps_within(path, [1.0, 1.0, 1.0], [0.2, 0.1, 0.1]),
                                  [4, 1, -1])


def test_simulation_refuses_a_bank_with_unusable_items():
    bank = ItemBank.from_arrays([1.0, np.nan], [0.0, 0.0])
    with pytest.raises(ValueError, match="usable"):
        simulate_cat(bank, [0.0], MaxInformation(), CatEAP(), FixedLength(2))


# --- The simulation study -----------------------------------------------------------------------

def test_simulation_study_runs_random_forms_longer_and_reads_lengths_off_the_curves():
    bank = _bank(n_items=150, seed=7)
    theta0 = np.random.default_rng(11).normal(size=1500)
    result = simulation_study(bank, theta0, CatEAP(), max_items=10, seed=3)
    assert result.mse_cat.shape == (11,) and result.mse_random.shape == (51,)
    rnd = simulate_cat(bank, theta0, RandomItems(), CatEAP(), FixedLength(50), seed=3)
    np.testing.assert_array_equal(result.mse_random, mse_by_step(rnd.theta, theta0))
    target = result.mse_cat[10]
    cat_length, random_length = result.lengths_to_reach(target)
    assert cat_length == 10
    assert random_length == length_to_reach(result.mse_random, target) and random_length > 10
    table = study_table(result)
    np.testing.assert_array_equal(table["items"], np.arange(1, 51))
    np.testing.assert_array_equal(table["mse_cat"][:10], result.mse_cat[1:])
    assert np.isnan(table["mse_cat"][10:]).all()


def test_noise_grid_and_curves():
    assert noise_grid([0.0, 0.2]) == [(0.0, 0.0), (0.0, 0.2), (0.2, 0.0), (0.2, 0.2)]
    bank = _bank()
    theta0 = np.random.default_rng(0).normal(size=100)
    curves = noise_curves(bank, theta0, MaxInformation(), CatEAP(), [(0.0, 0.0)], max_items=5,
                          seed=1)
    paths = simulate_cat(bank, theta0, MaxInformation(), CatEAP(), FixedLength(5), seed=1)
    np.testing.assert_allclose(curves[(0.0, 0.0)][1:], np.median(paths.se[:, 1:], axis=0))
    means = noise_curves(bank, theta0, MaxInformation(), CatEAP(), [(0.0, 0.0)], max_items=5,
                         seed=1, statistic=mean_by_step)
    np.testing.assert_allclose(means[(0.0, 0.0)][1:], paths.se[:, 1:].mean(axis=0))
