"""analytics.items.fit: Lord–Wingersky, S-X² and RMSD item fit against slow references and
simulations from known parameters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chi2

from analytics.irt import ItemBank, probability
from analytics.items.fit import (
    RMSD_MISFIT_THRESHOLD,
    collapse_score_groups,
    expected_proportions_by_score,
    pool_into_less_populated,
    rmsd_item_fit,
    score_tables,
    summed_score_likelihood,
    sx2_item_fit,
)


def _bank(seed: int, n_items: int) -> ItemBank:
    rng = np.random.default_rng(seed)
    return ItemBank.from_arrays(rng.lognormal(0.0, 0.3, n_items), rng.normal(0.0, 1.0, n_items),
                                rng.uniform(0.0, 0.25, n_items))


def _simulate(bank: ItemBank, n_examinees: int, rng: np.random.Generator,
              first_item_curve=None) -> np.ndarray:
    """0/1 responses of N(0, 1) examinees; item 0 follows ``first_item_curve`` when given."""
    theta = rng.normal(size=n_examinees)
    p = probability(theta, bank)
    if first_item_curve is not None:
        p[:, 0] = first_item_curve(theta)
    return (rng.random(p.shape) < p).astype(float)


def _bell(theta: np.ndarray) -> np.ndarray:
    """A non-monotone curve: highest at θ = 0, falling to 0.2 on both sides."""
    return 0.2 + 0.6 * np.exp(-(theta**2))


def _patterns(n_items: int) -> np.ndarray:
    return np.array(list(itertools.product([0, 1], repeat=n_items)), dtype=float)


# --- Lord–Wingersky ----------------------------------------------------------------------------

def test_summed_score_likelihood_matches_enumeration_of_all_patterns():
    bank = _bank(3, 6)
    theta = np.array([-2.5, -0.7, 0.0, 1.3, 3.0])
    p = probability(theta, bank)
    patterns = _patterns(6)
    likelihood = summed_score_likelihood(p)
    assert likelihood.shape == (5, 7)
    for t in range(theta.shape[0]):
        brute = np.zeros(7)
        for pattern in patterns:
            prob = 1.0
            for i, x in enumerate(pattern):
                prob *= p[t, i] if x == 1 else 1.0 - p[t, i]
            brute[int(pattern.sum())] += prob
        np.testing.assert_allclose(likelihood[t], brute, rtol=1e-12, atol=1e-15)
        assert math.isclose(likelihood[t].sum(), 1.0, rel_tol=1e-12)


def test_summed_score_likelihood_takes_leading_axes_and_rejects_non_probabilities():
    p = probability(np.linspace(-2, 2, 4), _bank(4, 5))
    stacked = summed_score_likelihood(np.stack([p, p[::-1]]))
    np.testing.assert_allclose(stacked[1], summed_score_likelihood(p[::-1]), rtol=1e-14)
    with pytest.raises(ValueError):
        summed_score_likelihood([[0.5, np.nan]])
    with pytest.raises(ValueError):
        summed_score_likelihood([[0.5, 1.2]])


# --- score tables ------------------------------------------------------------------------------

def test_score_tables_match_a_loop_with_and_without_weights():
    rng = np.random.default_rng(5)
    responses = (rng.random((300, 9)) < 0.6).astype(float)
    weights = rng.integers(0, 5, 300).astype(float)
    for w in (None, weights):
        counts, correct = score_tables(responses, w)
        loop_counts = np.zeros(10)
        loop_correct = np.zeros((9, 10))
        for row, x in enumerate(responses):
            weight = 1.0 if w is None else w[row]
            s = int(x.sum())
            loop_counts[s] += weight
            for i in range(9):
                loop_correct[i, s] += weight * x[i]
        np.testing.assert_allclose(counts, loop_counts, rtol=1e-12)
        np.testing.assert_allclose(correct, loop_correct, rtol=1e-12)


def test_score_tables_reject_missing_and_non_binary_entries():
    with pytest.raises(ValueError):
        score_tables([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError):
        score_tables([[1.0, 2.0]])
    with pytest.raises(ValueError):
        score_tables([[1.0, 0.0]], weights=[-1.0])


# --- expected proportions and collapsing --------------------------------------------------------

def test_expected_proportions_add_up_to_the_score():
    # Given S = s exactly s items are right, so Σ_i E_is = s for any bank and latent distribution.
    bank = _bank(6, 12)
    for mean, sd in [(0.0, 1.0), (0.7, 0.6)]:
        expected = expected_proportions_by_score(bank, prior_mean=mean, prior_sd=sd)
        np.testing.assert_allclose(expected.sum(axis=0), np.arange(13), rtol=1e-10, atol=1e-12)
        assert np.all(expected[:, 0] == 0.0)
        np.testing.assert_allclose(expected[:, -1], 1.0, rtol=1e-12)


def test_collapse_merges_sparse_tails_toward_the_middle():
    # Expected right: .1 .2 5 5 5 .9; wrong: .9 .8 5 5 5 .1. The two bottom scores need the
    # third to reach 1 expected right; the top score joins its lower neighbour.
    labels = collapse_score_groups([1, 1, 10, 10, 10, 1], [0.1, 0.2, 0.5, 0.5, 0.5, 0.9])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 2, 2])
    # An empty interior score as far from both ends joins the next higher one (tie rule).
    np.testing.assert_array_equal(collapse_score_groups([10, 0, 10], [0.5] * 3), [0, 1, 1])
    # Nothing to collapse.
    np.testing.assert_array_equal(collapse_score_groups([10, 10], [0.5, 0.5]), [0, 1])
    # A stricter minimum pools more.
    np.testing.assert_array_equal(collapse_score_groups([4, 4, 8], [0.5] * 3, 2.5), [0, 0, 1])


def test_mirt_pooling_merges_the_lowest_sparse_row_into_its_less_populated_neighbour():
    # Expected right .1 .2 5 5 5 .9 (wrong .9 .8 5 5 5 .1). Score 0 is sparse and at the end:
    # it joins score 1 (N 2, right .3, still sparse), which joins score 2; then the top score
    # joins its only neighbour.
    labels = pool_into_less_populated([1, 1, 10, 10, 10, 1], [0.1, 0.2, 0.5, 0.5, 0.5, 0.9])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 2, 2])
    # An interior sparse row joins the less populated side (6 people below, 20 above) ...
    np.testing.assert_array_equal(
        pool_into_less_populated([20, 6, 1, 20], [0.5, 0.5, 0.5, 0.5]), [0, 1, 1, 2])
    # ... and the lower side on a tie.
    np.testing.assert_array_equal(
        pool_into_less_populated([20, 6, 1, 6, 20], [0.5] * 5), [0, 1, 1, 2, 3])
    # A score nobody obtained is left out (−1) and does not count as a neighbour.
    np.testing.assert_array_equal(
        pool_into_less_populated([10, 0, 1, 30], [0.5] * 4), [0, -1, 0, 1])
    # One group left, still sparse: it stays.
    np.testing.assert_array_equal(pool_into_less_populated([1, 0], [0.5, 0.5]), [0, -1])


# --- S-X² against a slow reference --------------------------------------------------------------

def _reference_collapse(n_s, e_s, minimum):
    """Plain-Python copy of the documented rule: groups as [scores]; the inadequate group nearest
    an end merges with its neighbour toward the middle (lower end on a tie)."""
    groups = [[j] for j in range(len(n_s))]

    def sums(group):
        return (sum(n_s[j] * e_s[j] for j in group), sum(n_s[j] * (1 - e_s[j]) for j in group))

    while len(groups) > 1:
        bad = [g for g, group in enumerate(groups) if min(sums(group)) < minimum]
        if not bad:
            break
        if bad[0] <= len(groups) - 1 - bad[-1]:
            groups[bad[0]:bad[0] + 2] = [groups[bad[0]] + groups[bad[0] + 1]]
        else:
            groups[bad[-1] - 1:bad[-1] + 1] = [groups[bad[-1] - 1] + groups[bad[-1]]]
    return groups


def _reference_sx2(bank, responses, n_parameters, minimum, n_quadrature=121, low=-6.0, high=6.0):
    """S-X² the slow way: E_is as P(x_i = 1 | S = s) from every 0/1 pattern enumerated at each
    quadrature point (no recursion), observed proportions by looping over examinees."""
    n = bank.n_items
    points = [low + (high - low) * q / (n_quadrature - 1) for q in range(n_quadrature)]
    phi = [math.exp(-0.5 * t * t) for t in points]
    total_phi = sum(phi)
    phi = [v / total_phi for v in phi]
    p = probability(np.array(points), bank)
    joint_right = [[0.0] * (n + 1) for _ in range(n)]
    marginal = [0.0] * (n + 1)
    for pattern in itertools.product([0, 1], repeat=n):
        s = sum(pattern)
        for q in range(n_quadrature):
            prob = phi[q]
            for i, x in enumerate(pattern):
                prob *= p[q, i] if x else 1.0 - p[q, i]
            marginal[s] += prob
            for i, x in enumerate(pattern):
                if x:
                    joint_right[i][s] += prob
    counts = [0.0] * (n + 1)
    right = [[0.0] * (n + 1) for _ in range(n)]
    for row in responses:
        s = int(sum(row))
        counts[s] += 1
        for i in range(n):
            right[i][s] += row[i]
    statistics, dfs = [], []
    for i in range(n):
        scores = list(range(1, n))
        n_s = [counts[s] for s in scores]
        e_s = [joint_right[i][s] / marginal[s] for s in scores]
        total = 0.0
        groups = _reference_collapse(n_s, e_s, minimum)
        for group in groups:
            n_g = sum(n_s[j] for j in group)
            e_g = sum(n_s[j] * e_s[j] for j in group) / n_g
            o_g = sum(right[i][scores[j]] for j in group) / n_g
            total += n_g * (o_g - e_g) ** 2 / (e_g * (1 - e_g))
        statistics.append(total)
        dfs.append(len(groups) - n_parameters)
    return np.array(statistics), np.array(dfs)


@pytest.mark.parametrize("n_examinees, n_parameters, minimum", [(400, 3, 1.0), (250, 0, 5.0)])
def test_sx2_equals_the_slow_reference(n_examinees, n_parameters, minimum):
    bank = _bank(7, 7)
    responses = _simulate(bank, n_examinees, np.random.default_rng(8))
    counts, correct = score_tables(responses)
    result = sx2_item_fit(bank, counts, correct, n_estimated_parameters=n_parameters,
                          min_expected=minimum, pooling="tails")
    statistic, df = _reference_sx2(bank, responses, n_parameters, minimum)
    np.testing.assert_allclose(result.statistic, statistic, rtol=1e-9)
    np.testing.assert_array_equal(result.df, df)
    np.testing.assert_array_equal(result.n_groups, df + n_parameters)
    # The samples are small enough that some tails are pooled.
    assert result.n_groups.min() < bank.n_items - 1
    positive = df > 0
    np.testing.assert_allclose(result.p_value[positive],
                               chi2.sf(statistic[positive], df[positive]), rtol=1e-9)
    assert np.all(np.isnan(result.p_value[~positive]))


def test_sx2_from_weighted_unique_patterns_equals_the_expanded_sample():
    bank = _bank(9, 8)
    rng = np.random.default_rng(10)
    unique = _patterns(8)
    frequency = rng.integers(0, 12, unique.shape[0]).astype(float)
    expanded = np.repeat(unique, frequency.astype(int), axis=0)
    weighted = sx2_item_fit(bank, *score_tables(unique, frequency))
    plain = sx2_item_fit(bank, *score_tables(expanded))
    np.testing.assert_allclose(weighted.statistic, plain.statistic, rtol=1e-10)
    np.testing.assert_array_equal(weighted.df, plain.df)


def test_sx2_rejects_bad_inputs():
    bank = _bank(11, 4)
    counts, correct = np.full(5, 10.0), np.full((4, 5), 5.0)
    with pytest.raises(ValueError):
        sx2_item_fit(bank, counts[:4], correct)
    with pytest.raises(ValueError):
        sx2_item_fit(bank, counts, correct + 6.0)  # more right than examinees
    with pytest.raises(ValueError):
        sx2_item_fit(ItemBank.from_arrays([1, 1, 1, np.nan], [0, 0, 0, 0]), counts, correct)


# --- S-X² calibration and power -----------------------------------------------------------------

N_ITEMS, N_EXAMINEES, N_REPLICATIONS, ALPHA = 20, 3000, 40, 0.05


def _rejections(first_item_curve=None, seed=12, n_replications=N_REPLICATIONS):
    """Rejections at ALPHA (n_replications, N_ITEMS), with the true parameters fixed (df =
    groups − 0)."""
    bank = _bank(1, N_ITEMS)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_replications):
        responses = _simulate(bank, N_EXAMINEES, rng, first_item_curve)
        result = sx2_item_fit(bank, *score_tables(responses), n_estimated_parameters=0)
        out.append(result.p_value < ALPHA)
    return np.array(out)


def test_sx2_false_positive_rate_is_nominal_on_model_data():
    rejected = _rejections()
    rate = rejected.mean()
    standard_error = math.sqrt(ALPHA * (1 - ALPHA) / rejected.size)
    assert abs(rate - ALPHA) <= 3 * standard_error, rate
    # No item is singled out by the procedure itself.
    assert rejected.mean(axis=0).max() <= 0.2


@pytest.mark.parametrize("curve", [
    _bell,
    lambda theta: probability(theta, ItemBank.from_arrays([4.0], [0.0], [0.1]))[:, 0],
], ids=["non-monotone", "steep"])
def test_sx2_flags_an_item_from_another_curve(curve):
    rejected = _rejections(curve, seed=13, n_replications=15)
    assert rejected[:, 0].mean() >= 0.9
    # The other items stay near the nominal rate; a little above it, since the misfitting item
    # also distorts the summed score they are conditioned on (0.098 measured for the bell curve).
    assert rejected[:, 1:].mean() <= 0.15


# --- RMSD ---------------------------------------------------------------------------------------

def test_rmsd_is_small_on_model_data_and_large_for_a_misfitting_item():
    bank = _bank(1, N_ITEMS)
    rng = np.random.default_rng(14)
    fitting = rmsd_item_fit(_simulate(bank, 20000, rng), bank)
    assert fitting.rmsd.max() < 0.03
    assert np.abs(fitting.mean_deviation).max() < 0.02
    assert not fitting.misfit.any()
    misfitting = rmsd_item_fit(_simulate(bank, 20000, rng, _bell), bank)
    assert misfitting.rmsd[0] > 0.1
    assert misfitting.rmsd[1:].max() < 0.03
    np.testing.assert_array_equal(misfitting.misfit, misfitting.rmsd > RMSD_MISFIT_THRESHOLD)
    assert rmsd_item_fit(_simulate(bank, 20000, rng, _bell), bank, threshold=0.1).misfit[0]


def test_rmsd_mean_deviation_is_negative_for_a_harder_item():
    bank = _bank(1, N_ITEMS)
    harder = ItemBank.from_arrays([bank.a[0]], [bank.b[0] + 1.5], [bank.c[0]])
    result = rmsd_item_fit(
        _simulate(bank, 10000, np.random.default_rng(15),
                  lambda theta: probability(theta, harder)[:, 0]), bank)
    assert result.mean_deviation[0] < -0.1
    assert result.rmsd[0] > 0.1


def test_rmsd_weights_missing_entries_and_items_without_parameters():
    bank = _bank(16, 10)
    rng = np.random.default_rng(17)
    responses = _simulate(bank, 600, rng)
    # Frequency weights equal repeated rows.
    weights = rng.integers(0, 4, 600).astype(float)
    weighted = rmsd_item_fit(responses, bank, weights=weights)
    expanded = rmsd_item_fit(np.repeat(responses, weights.astype(int), axis=0), bank)
    np.testing.assert_allclose(weighted.rmsd, expanded.rmsd, rtol=1e-9)
    np.testing.assert_allclose(weighted.mean_deviation, expanded.mean_deviation, rtol=1e-9,
                               atol=1e-14)
    # An item without parameters gets NaN and leaves the others as if it were not there.
    a = bank.a.copy()
    a[3] = np.nan
    with_gap = rmsd_item_fit(responses, ItemBank.from_arrays(a, bank.b, bank.c))
    keep = np.arange(10) != 3
    without = rmsd_item_fit(responses[:, keep], bank.subset(keep))
    assert np.isnan(with_gap.rmsd[3]) and not with_gap.misfit[3]
    np.testing.assert_allclose(with_gap.rmsd[keep], without.rmsd, rtol=1e-12)
    # A missing response leaves that examinee out of the item's curve only: blanking item 0 for
    # everyone leaves item 0 without a curve.
    blank = responses.copy()
    blank[:, 0] = np.nan
    assert np.isnan(rmsd_item_fit(blank, bank).rmsd[0])


# --- S-X² against the Python mirt package ------------------------------------------------------

def _mirt_sx2(bank: ItemBank, responses: np.ndarray, mean: float, sd: float, minimum: float,
              n_parameters: int) -> dict:
    """``mirt.compute_s_x2`` (mirt 1.2.0) on the same 3PL items, θ grid and N(mean, sd²)
    weights: the reference implementation of S-X² and of its pooling of sparse scores."""
    from mirt.diagnostics import compute_s_x2
    from mirt.models.dichotomous import ThreeParameterLogistic

    from analytics.ability import QuadratureGrid

    model = ThreeParameterLogistic(n_items=bank.n_items)
    # mirt's slope multiplies θ − b directly: D·a is ours.
    model.set_parameters(discrimination=bank.scaling * bank.a, difficulty=bank.b,
                         guessing=bank.c)
    points = QuadratureGrid(121, (-6.0, 6.0)).points
    weights = np.exp(-0.5 * ((points - mean) / sd) ** 2)
    return compute_s_x2(model, responses.astype(int), quadrature_points=points,
                        quadrature_weights=weights / weights.sum(), min_expected=minimum,
                        item_parameter_counts=np.full(bank.n_items, n_parameters))


@pytest.mark.parametrize("n_items, n_examinees, mean, sd, minimum, n_parameters", [
    (45, 3000, 0.0, 1.0, 1.0, 3),   # a booklet's length, a sample of a form
    (20, 250, -0.8, 0.7, 1.0, 3),   # a small low-scoring group: many sparse rows pooled
    (12, 60, 0.5, 1.2, 5.0, 0),     # a stricter minimum; sometimes one sparse group is left
    (30, 900, 1.0, 0.8, 2.0, 2),
])
def test_sx2_equals_the_python_mirt_package(n_items, n_examinees, mean, sd, minimum,
                                            n_parameters):
    base = _bank(n_items, n_items)
    bank = ItemBank(base.a, base.b, base.c, scaling=1.7)
    rng = np.random.default_rng(n_examinees)
    theta = rng.normal(mean, sd, n_examinees)
    responses = (rng.random((n_examinees, n_items)) < probability(theta, bank)).astype(float)
    ours = sx2_item_fit(bank, *score_tables(responses), n_estimated_parameters=n_parameters,
                        min_expected=minimum, prior_mean=mean, prior_sd=sd)
    reference = _mirt_sx2(bank, responses, mean, sd, minimum, n_parameters)
    np.testing.assert_allclose(ours.statistic, reference["S_X2"], rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(np.maximum(ours.df, 0), reference["df"])
    np.testing.assert_allclose(ours.p_value, reference["p_value"], rtol=1e-6, atol=1e-10,
                               equal_nan=True)
    # The tails rule differs from mirt's wherever sparse rows are pooled differently.
    tails = sx2_item_fit(bank, *score_tables(responses), n_estimated_parameters=n_parameters,
                         min_expected=minimum, prior_mean=mean, prior_sd=sd, pooling="tails")
    assert not np.allclose(tails.statistic, reference["S_X2"], rtol=1e-6, equal_nan=True)


def test_sx2_rejects_an_unknown_pooling_rule():
    bank = _bank(11, 4)
    with pytest.raises(ValueError, match="pooling"):
        sx2_item_fit(bank, np.full(5, 10.0), np.full((4, 5), 5.0), pooling="centre")
