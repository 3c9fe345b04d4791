"""The option analysis's statistics against scipy and hand-made cases: the binomial test, χ²,
Welch's t (with frequency weights), the Jensen–Shannon distance, trap flags, the most chosen
distractor, counts near a θ, shown positions under the shuffle convention, difficulty bands."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from analytics.options import (
    DISTRACTOR_CHANCE,
    counts_near,
    difficulty_band,
    difficulty_band_edges,
    distractor_agreement,
    jensen_shannon_distance,
    key_position_dependence,
    most_chosen_distractor,
    option_shares,
    position_accuracy,
    shown_positions,
    trap_flags,
)
from analytics.significance import binomial_test, chi_square_goodness_of_fit, welch_t_test
from inference.shuffles import (
    displayed_key,
    option_permutations,
    to_original_choices,
    to_original_letter,
)

LETTERS = "ABCDE"


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("k", "n", "p"), [(0, 1, 0.25), (7, 20, 0.25), (13, 20, 0.25),
                                           (5, 20, 0.25), (50, 120, 0.3), (120, 120, 0.25),
                                           (3, 9, 0.5)])
def test_binomial_test_matches_scipy(k, n, p, alternative):
    ours = binomial_test(k, n, p, alternative)
    theirs = stats.binomtest(k, n, p, alternative=alternative)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10, abs=1e-300)
    assert ours.share == k / n


def test_binomial_test_without_trials_is_nan_and_bad_counts_are_refused():
    assert math.isnan(binomial_test(0, 0, 0.25).p_value)
    with pytest.raises(ValueError):
        binomial_test(5, 3, 0.25)


@pytest.mark.parametrize("observed", [[10, 12, 9, 30, 14], [1, 0, 0, 0, 0], [5, 5, 5, 5, 5],
                                      [100, 3, 40, 0, 7]])
def test_chi_square_against_uniform_matches_scipy(observed):
    ours = chi_square_goodness_of_fit(observed)
    theirs = stats.chisquare(observed)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10)
    assert ours.dof == 4


def test_chi_square_against_given_shares_matches_scipy():
    observed = np.array([30, 20, 25, 15, 10])
    shares = np.array([0.3, 0.2, 0.2, 0.2, 0.1])
    ours = chi_square_goodness_of_fit(observed, shares * 7)  # shares need not sum to 1
    theirs = stats.chisquare(observed, shares * observed.sum())
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10)


def test_welch_t_test_matches_scipy_on_plain_samples():
    rng = np.random.default_rng(3)
    x, y = rng.normal(10, 2, 40), rng.normal(11, 5, 25)
    ours = welch_t_test(x, y)
    theirs = stats.ttest_ind(x, y, equal_var=False)
    assert ours.t == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10)
    assert ours.dof == pytest.approx(theirs.df, rel=1e-12)


def test_welch_t_test_with_frequency_weights_equals_the_expanded_samples():
    values_x, weights_x = np.array([120.0, 300.0, 85.0]), np.array([4, 1, 7])
    values_y, weights_y = np.array([120.0, 300.0, 85.0, 410.0]), np.array([2, 6, 1, 3])
    ours = welch_t_test(values_x, values_y, weights_x, weights_y)
    theirs = stats.ttest_ind(np.repeat(values_x, weights_x), np.repeat(values_y, weights_y),
                             equal_var=False)
    assert ours.t == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-10)
    assert (ours.n_x, ours.n_y) == (12, 12)
    assert ours.mean_x == pytest.approx(np.repeat(values_x, weights_x).mean())


def test_welch_t_test_is_nan_with_too_few_observations():
    assert math.isnan(welch_t_test([1.0], [2.0, 3.0]).p_value)
    assert math.isnan(welch_t_test([1.0, 1.0], [1.0, 1.0]).p_value)


def test_jensen_shannon_distance_matches_scipy_row_by_row():
    rng = np.random.default_rng(8)
    p = rng.integers(0, 50, (30, 5)).astype(float)
    q = rng.random((30, 5))
    p[0] = [0, 0, 3, 0, 0]  # zeros on one side
    q[1] = p[1]  # identical
    ours = jensen_shannon_distance(p, q)
    for row in range(len(p)):
        assert ours[row] == pytest.approx(jensenshannon(p[row], q[row], base=2), abs=1e-12)
    assert ours[1] == pytest.approx(0.0, abs=1e-7)


def test_jensen_shannon_distance_of_disjoint_distributions_is_one_and_empty_is_nan():
    got = jensen_shannon_distance([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
                                  [[0, 2, 0, 0, 0], [1, 1, 1, 1, 1]])
    assert got[0] == pytest.approx(1.0)
    assert math.isnan(got[1])


def test_trap_flag_and_most_chosen_distractor_on_constructed_items():
    counts = np.array([
        [50, 30, 10, 5, 5],    # key A, no trap
        [40, 40, 10, 5, 5],    # key A, a distractor ties the key: a trap
        [10, 20, 60, 5, 5],    # key B, C draws more: a trap
        [0, 0, 0, 0, 0],       # no answers: undefined
        [5, 9, 9, 3, 1],       # key E, B and C tie: B (earliest letter), a trap
        [10, 20, 30, 40, 50],  # no key: undefined
    ])
    key = np.array([0, 0, 1, 2, 4, -1])
    np.testing.assert_array_equal(most_chosen_distractor(counts, key), [1, 1, 2, -1, 1, -1])
    flags = trap_flags(counts, key)
    np.testing.assert_array_equal(flags[[0, 1, 2, 4]], [0.0, 1.0, 1.0, 1.0])
    assert np.isnan(flags[[3, 5]]).all()


def test_counts_near_sums_the_bins_whose_centre_is_close_enough():
    width = 0.25
    lower = np.array([-1.0, -0.75, -0.5, -0.25, 0.0, 0.25])  # centres -0.875 … 0.375
    table = np.arange(2 * 6 * 5, dtype=float).reshape(2, 6, 5)
    got = counts_near(table, lower, width, np.array([-0.5, np.nan]), half_width=0.4)
    # distances of the centres from −0.5: 0.375, 0.125, 0.125, 0.375, 0.625, 0.875
    expected = table[0, [0, 1, 2, 3]].sum(axis=0)
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], np.zeros(5))


def test_distractor_agreement_counts_only_wrong_answers_with_a_choice():
    key = np.array([0, 0, 0, 0, 0, 0, 1, 1])
    lure = np.array([2, 2, 2, 2, 2, 2, 3, -1])
    chosen = np.array([0, 2, 2, 3, -1, 4, 3, 0])
    # wrong with a choice and a lure: indices 1, 2, 3, 5, 6 → agreeing 1, 2, 6
    result = distractor_agreement(chosen, key, lure)
    assert (result.successes, result.trials) == (3, 5)
    assert result.chance == DISTRACTOR_CHANCE == 0.25
    assert result.p_value == pytest.approx(stats.binomtest(3, 5, 0.25).pvalue)


def test_shown_positions_follow_the_shuffle_convention_by_hand():
    # "CAEBD": C is shown under A, A under B, E under C, B under D, D under E.
    perm = np.array([[2, 0, 4, 1, 3]] * 5)
    np.testing.assert_array_equal(shown_positions([0, 1, 2, 3, 4], perm), [1, 3, 0, 4, 2])
    assert shown_positions([-1], perm[:1])[0] == -1
    with pytest.raises(ValueError):
        shown_positions([0], [[0, 0, 1, 2, 3]])


def test_shown_positions_invert_the_mapping_of_inference_shuffles():
    """Every displayed choice of every permutation maps to an original letter and back."""
    perms = np.array(list(itertools.permutations(range(5))))
    for displayed in range(5):
        original = to_original_choices(np.full(len(perms), displayed), perms)
        np.testing.assert_array_equal(shown_positions(original, perms), displayed)
    for perm in option_permutations(30, seed=4, item_key=123):
        for letter in LETTERS:
            where = shown_positions([LETTERS.index(letter)], perm[None, :])[0]
            assert LETTERS[where] == displayed_key(letter, perm)
            assert to_original_letter(int(where), perm) == letter


def test_option_shares_normalise_rows():
    got = option_shares([[1, 1, 2, 0, 0], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(got[0], [0.25, 0.25, 0.5, 0, 0])
    assert np.isnan(got[1]).all()


def test_difficulty_bands_split_items_in_equal_thirds():
    b = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, np.nan])
    edges = difficulty_band_edges(b, 3)
    np.testing.assert_allclose(edges, np.quantile(b[:-1], [0, 1 / 3, 2 / 3, 1]))
    band = difficulty_band(b, edges)
    assert band[-1] == -1
    assert band[0] == 0 and band[-2] == 2  # both outer edges inside
    np.testing.assert_array_equal(np.bincount(band[:-1]), [3, 3, 3])


def test_shown_positions_read_a_partial_order_by_hand():
    # "?C??A" as indices: C shown under B, A under E, the rest not recorded (-1).
    partial = np.array([[-1, 2, -1, -1, 0]] * 4)
    np.testing.assert_array_equal(shown_positions([2, 0, 3, -1], partial), [1, 4, -1, -1])
    with pytest.raises(ValueError):
        shown_positions([0], [[-1, 2, -1, 2, 0]])  # one original shown twice
    with pytest.raises(ValueError):
        shown_positions([0], [[-2, 2, -1, -1, 0]])


def _scipy_dependence(answers: np.ndarray, correct: np.ndarray) -> float:
    """Pearson's χ² of the 2 × k table (correct, wrong) × key positions that held the key,
    by scipy (no continuity correction: k − 1 ≥ 1 degrees of freedom)."""
    shown = answers > 0
    table = np.array([correct[shown], (answers - correct)[shown]])
    return stats.chi2_contingency(table, correction=False).statistic


def test_key_position_dependence_is_the_chi_square_of_scipys_contingency_test():
    rng = np.random.default_rng(23)
    answers = rng.integers(0, 9, (200, 5)).astype(float)
    answers[:20, :2] = 0  # keys never shown at A or B: those positions drop out
    correct = np.floor(answers * rng.random((200, 5)))
    ours = key_position_dependence(answers, correct)
    for row in range(len(answers)):
        varied = 0 < correct[row].sum() < answers[row].sum() and (answers[row] > 0).sum() > 1
        if varied:
            assert ours[row] == pytest.approx(_scipy_dependence(answers[row], correct[row]),
                                              rel=1e-12)


def test_key_position_dependence_by_hand_and_its_edge_cases():
    # Key at A 4 times (all right), at C 4 times (none right): p = 1/2 overall,
    # χ² = Σ (c − n·p)² / (n·p·(1 − p)) = 2 · (2² / 1) = 8, the most 8 answers can give.
    answers = np.array([[4, 0, 4, 0, 0],
                        [3, 3, 3, 3, 3],    # always right: correctness cannot depend on it
                        [3, 3, 3, 3, 3],    # never right
                        [0, 0, 30, 0, 0],   # key always at one place: nothing to compare
                        [0, 0, 0, 0, 0],    # never answered
                        [2, 2, 2, 2, 2]], dtype=float)
    correct = np.array([[4, 0, 0, 0, 0], [3, 3, 3, 3, 3], [0, 0, 0, 0, 0], [12, 0, 0, 0, 0],
                        [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=float)
    correct[3] = [0, 0, 12, 0, 0]
    got = key_position_dependence(answers, correct)
    assert got[0] == pytest.approx(8.0)
    assert got[1] == 0.0 and got[2] == 0.0
    assert np.isnan(got[3]) and np.isnan(got[4])
    assert got[5] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        key_position_dependence([[1, 1, 1, 1, 1]], [[2, 0, 0, 0, 0]])  # more right than asked


def test_position_accuracy_divides_where_the_key_was_shown():
    got = position_accuracy([[4, 0, 2, 1, 0]], [[1, 0, 2, 0, 0]])
    np.testing.assert_array_equal(got[0, [0, 2, 3]], [0.25, 1.0, 0.0])
    assert np.isnan(got[0, [1, 4]]).all()


def test_tables_of_several_tests_show_benjamini_hochberg_q_values_beside_p():
    import pandas as pd
    from scipy.stats import false_discovery_control

    from dashboard.options.tables import Q_COLUMN, with_p_text

    p = [0.001, 0.04, 0.03, 0.5, float("nan"), 0.0]
    shown = with_p_text(pd.DataFrame({"series": list("abcdef"), "p_value": p}))
    assert list(shown.columns) == ["series", "p_value", Q_COLUMN]
    finite = [value for value in p if not math.isnan(value)]
    expected = iter(false_discovery_control(finite))
    for text, value in zip(shown[Q_COLUMN], p, strict=True):
        if math.isnan(value):
            assert text == "—"
        else:
            q = next(expected)
            assert text == ("< 1e-300" if q == 0 else f"{q:.3g}")
    few = with_p_text(pd.DataFrame({"series": ["a", "b"], "p_value": [0.01, 0.2]}))
    assert Q_COLUMN not in few.columns
