"""analytics.irt: the item bank, 3PL probabilities and Fisher information."""

from __future__ import annotations

import math

import numpy as np
import pytest
from catsim import irt as catsim_irt

from analytics import irt
from analytics.irt import ItemBank, item_information, probability, standard_error_curve


def _bank(seed: int = 0, n_items: int = 30, scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.5, 0.3, n_items), rng.normal(0.5, 1.2, n_items),
                                rng.uniform(0.0, 0.3, n_items), scaling=scaling)


def _slow_probability(theta: float, a: float, b: float, c: float, d: float) -> float:
    return c + (1 - c) / (1 + math.exp(-d * a * (theta - b)))


# --- ItemBank --------------------------------------------------------------------------------

def test_from_arrays_coerces_to_read_only_float64_and_2pl_default():
    bank = ItemBank.from_arrays([1, 2], [0, 1])
    assert bank.a.dtype == np.float64 and bank.b.dtype == np.float64
    np.testing.assert_array_equal(bank.c, [0.0, 0.0])
    assert bank.n_items == 2 and bank.scaling == 1.0
    with pytest.raises(ValueError):
        bank.a[0] = 5.0


def test_bank_copies_its_inputs():
    a = np.array([1.0, 2.0])
    bank = ItemBank.from_arrays(a, [0.0, 0.0])
    a[0] = 9.0
    assert bank.a[0] == 1.0


@pytest.mark.parametrize("a, b, c", [([1, 2], [0], None), ([1, 2], [0, 1], [0.1]),
                                     ([[1, 2]], [[0, 1]], None)])
def test_from_arrays_rejects_mismatched_shapes(a, b, c):
    with pytest.raises(ValueError, match="shape"):
        ItemBank.from_arrays(a, b, c)


@pytest.mark.parametrize("c", [[-0.1, 0.2], [0.1, 1.0]])
def test_from_arrays_rejects_guessing_outside_unit_interval(c):
    with pytest.raises(ValueError, match="c"):
        ItemBank.from_arrays([1, 1], [0, 0], c)


@pytest.mark.parametrize("scaling", [0.0, -1.7, float("nan"), float("inf")])
def test_from_arrays_rejects_bad_scaling(scaling):
    with pytest.raises(ValueError, match="scaling"):
        ItemBank.from_arrays([1.0], [0.0], scaling=scaling)


def test_usable_and_subset():
    bank = ItemBank.from_arrays([1.0, np.nan, 1.2, 0.8], [0.0, np.nan, np.nan, 1.0],
                                [0.2, np.nan, 0.1, 0.0], scaling=1.7)
    np.testing.assert_array_equal(bank.usable, [True, False, False, True])
    sub = bank.subset(bank.usable)
    np.testing.assert_array_equal(sub.a, [1.0, 0.8])
    np.testing.assert_array_equal(sub.b, [0.0, 1.0])
    assert sub.scaling == 1.7
    by_index = bank.subset([3, 0])
    np.testing.assert_array_equal(by_index.b, [1.0, 0.0])


# --- probability -----------------------------------------------------------------------------

@pytest.mark.parametrize("scaling", [1.0, 1.7])
def test_probability_at_difficulty_is_halfway_between_guessing_and_one(scaling):
    bank = ItemBank.from_arrays([0.7, 1.5, 2.5], [-1.0, 0.3, 2.0], [0.0, 0.2, 0.25],
                                scaling=scaling)
    for j in range(3):
        p = probability([bank.b[j]], bank)[0, j]
        assert p == pytest.approx(bank.c[j] + (1 - bank.c[j]) / 2, abs=1e-15)


def test_probability_hand_computed_value():
    # a = 1.5, b = 0.5, c = 0.2, D = 1.7, θ = 1: z = 1.7·1.5·0.5 = 1.275,
    # 1/(1 + e^−1.275) = 0.7815975, P = 0.2 + 0.8·0.7815975 = 0.8252780
    bank = ItemBank.from_arrays([1.5], [0.5], [0.2], scaling=1.7)
    expected = 0.2 + 0.8 / (1.0 + math.exp(-1.275))
    assert probability(1.0, bank)[0, 0] == pytest.approx(expected, rel=1e-15)
    assert expected == pytest.approx(0.8252780, abs=1e-7)


def test_probability_matches_slow_loop_with_shapes():
    bank = _bank(1, scaling=1.7)
    theta = np.linspace(-5, 5, 17)
    got = probability(theta, bank)
    assert got.shape == (17, bank.n_items)
    for k, t in enumerate(theta):
        for j in range(bank.n_items):
            want = _slow_probability(t, bank.a[j], bank.b[j], bank.c[j], 1.7)
            assert got[k, j] == pytest.approx(want, rel=1e-13)


def test_probability_is_nan_for_items_without_parameters():
    bank = ItemBank.from_arrays([1.0, np.nan], [0.0, np.nan], [0.1, np.nan])
    got = probability([-1.0, 0.0, 1.0], bank)
    assert np.all(np.isfinite(got[:, 0])) and np.all(np.isnan(got[:, 1]))


def test_probability_is_stable_for_extreme_theta():
    bank = ItemBank.from_arrays([3.0, 3.0], [0.0, 0.0], [0.0, 0.2])
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        got = probability([-1e4, -800.0, 800.0, 1e4], bank)
    # Logits are clipped at ±700: the lower tail floors at e^−700 ≈ 1e−304 instead of 0.
    assert np.all((got[:2, 0] > 0) & (got[:2, 0] < 1e-300))
    np.testing.assert_array_equal(got[2:, 0], [1.0, 1.0])
    np.testing.assert_allclose(got[:, 1], [0.2, 0.2, 1.0, 1.0])


def test_log_probabilities_keep_full_precision_in_both_tails():
    # Q = 1 − P for z = 40 is e^−40/(1 + e^−40); forming 1 − P would round it to 0.
    probs = irt.response_probabilities(np.array([[40.0, -40.0]]), np.array([0.0, 0.0]))
    assert probs.q[0, 0] == pytest.approx(math.exp(-40) / (1 + math.exp(-40)), rel=1e-14)
    assert np.log(probs.q[0, 0]) == pytest.approx(-40 - math.log1p(math.exp(-40)), rel=1e-15)
    assert np.log(probs.p[0, 1]) == pytest.approx(-40 - math.log1p(math.exp(-40)), rel=1e-15)
    assert np.log(probs.p[0, 0]) == pytest.approx(-math.exp(-40), rel=1e-12)


def test_probability_matches_catsim_icc():
    bank = _bank(2)
    items = np.column_stack([bank.a, bank.b, bank.c, np.ones(bank.n_items)])
    for t in (-3.0, -0.4, 0.0, 1.1, 3.5):
        np.testing.assert_allclose(probability(t, bank)[0], catsim_irt.icc_hpc(t, items),
                                   rtol=1e-13)


# --- information -----------------------------------------------------------------------------

def test_item_information_matches_reference_formula_loop():
    bank = _bank(3, scaling=1.7)
    theta = np.linspace(-4, 4, 9)
    got = item_information(theta, bank)
    for k, t in enumerate(theta):
        for j in range(bank.n_items):
            a, b, c = bank.a[j], bank.b[j], bank.c[j]
            p = _slow_probability(t, a, b, c, 1.7)
            want = 1.7**2 * a**2 * ((p - c) ** 2 / (1 - c) ** 2) * ((1 - p) / p)
            assert got[k, j] == pytest.approx(want, rel=1e-10)


def test_item_information_equals_squared_slope_over_variance():
    # For a dichotomous item I = P'(θ)² / (P·Q); P' by central differences.
    bank = _bank(4)
    theta, h = np.array([-1.3, 0.2, 2.4]), 1e-5
    slope = (probability(theta + h, bank) - probability(theta - h, bank)) / (2 * h)
    p = probability(theta, bank)
    np.testing.assert_allclose(item_information(theta, bank), slope**2 / (p * (1 - p)),
                               rtol=1e-7)


def test_information_matches_catsim():
    bank = _bank(5)
    items = np.column_stack([bank.a, bank.b, bank.c, np.ones(bank.n_items)])
    for t in (-2.0, 0.0, 0.7, 3.0):
        np.testing.assert_allclose(item_information(t, bank)[0], catsim_irt.inf_hpc(t, items),
                                   rtol=1e-10)
        assert irt.test_information(t, bank)[0] == pytest.approx(
            catsim_irt.test_info(t, items), rel=1e-10)
        assert standard_error_curve(t, bank)[0] == pytest.approx(
            catsim_irt.see(t, items), rel=1e-10)


def test_information_is_zero_for_unusable_items_and_se_infinite_without_items():
    bank = ItemBank.from_arrays([1.0, np.nan], [0.0, 0.5], [0.2, 0.1])
    info = item_information([0.0, 1.0], bank)
    np.testing.assert_array_equal(info[:, 1], 0.0)
    assert np.all(info[:, 0] > 0)
    np.testing.assert_allclose(irt.test_information([0.0, 1.0], bank), info[:, 0])
    empty = ItemBank.from_arrays([np.nan], [np.nan], [np.nan])
    assert np.all(np.isinf(standard_error_curve([0.0, 2.0], empty)))


def test_information_is_finite_in_the_tails():
    bank = ItemBank.from_arrays([2.0, 2.0], [0.0, 0.0], [0.0, 0.25])
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        info = item_information([-1e3, -50.0, 50.0, 1e3], bank)
    assert np.all(np.isfinite(info)) and np.all(info >= 0)
    assert np.all(info[[0, 3]] < 1e-300)


def test_se_curve_is_inverse_root_information():
    bank = _bank(6)
    theta = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(standard_error_curve(theta, bank),
                               1 / np.sqrt(item_information(theta, bank).sum(axis=1)))


# --- response matrices -----------------------------------------------------------------------

def test_counted_responses_drops_unusable_items_and_missing_entries():
    bank = ItemBank.from_arrays([1.0, np.nan, 1.0], [0.0, 0.0, 1.0])
    data = irt.counted_responses([[1.0, 1.0, np.nan], [0.0, 0.0, 1.0]], bank)
    assert data.bank.n_items == 2
    np.testing.assert_array_equal(data.correct, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(data.counted, [[1, 0], [1, 1]])
    np.testing.assert_array_equal(data.wrong, [[0, 0], [1, 0]])


@pytest.mark.parametrize("responses, message", [(np.zeros((2, 3)), "shape"),
                                                (np.array([[0.0, 0.5]]), "1.0"),
                                                (np.array([[2.0, 0.0]]), "1.0")])
def test_response_validation(responses, message):
    with pytest.raises(ValueError, match=message):
        irt.counted_responses(responses, ItemBank.from_arrays([1, 1], [0, 0]))


@pytest.mark.parametrize("shape", [(3, 45, 5000), (5000, 2, 45), (40, 45, 7), (121, 45, 3000)])
def test_sliced_product_equals_matmul(shape):
    k, m, n = shape
    rng = np.random.default_rng(k + n)
    left, right = rng.normal(size=(k, m)), rng.normal(size=(m, n))
    np.testing.assert_allclose(irt.sliced_product(left, right), left @ right, rtol=1e-12,
                               atol=1e-12)
    transposed = np.asfortranarray(right)
    np.testing.assert_allclose(irt.sliced_product(left, transposed), left @ right, rtol=1e-12,
                               atol=1e-12)
