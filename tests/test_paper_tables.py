"""The paper's table statistics (analytics.paper_tables) against scipy and hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analytics.paper_tables import (
    chi2_independence,
    contingency_2x2,
    least_squares_line,
    mean_sd,
    pearson,
)

# Items: attribute present for 14 of 40; discriminating for 22; 4 of the attribute items
# discriminate. Built item by item so the counts below are known by construction.
ATTRIBUTE = np.array([1] * 14 + [0] * 26, dtype=float)
DISCRIMINATING = np.array([1] * 4 + [0] * 10 + [1] * 18 + [0] * 8, dtype=float)
TABLE = np.array([[4, 10], [18, 8]])


def test_contingency_counts_items_by_attribute_and_discrimination():
    assert contingency_2x2(ATTRIBUTE, DISCRIMINATING).tolist() == TABLE.tolist()


def test_contingency_leaves_out_items_missing_either_value():
    attribute = np.append(ATTRIBUTE, [np.nan, 1.0])
    discriminating = np.append(DISCRIMINATING, [1.0, np.nan])
    assert contingency_2x2(attribute, discriminating).tolist() == TABLE.tolist()


@pytest.mark.parametrize("correction", [True, False])
def test_chi2_matches_scipy_on_a_constructed_table(correction):
    ours = chi2_independence(TABLE, correction=correction)
    statistic, p_value, dof, expected = stats.chi2_contingency(TABLE, correction=correction)
    assert ours.statistic == pytest.approx(statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(p_value, rel=1e-12)
    assert ours.dof == dof == 1
    np.testing.assert_allclose(ours.expected, expected, rtol=1e-12)
    assert ours.corrected is correction


def test_chi2_by_hand_without_and_with_yates():
    # Margins 14/26 and 22/18 of n = 40: E = [[7.7, 6.3], [14.3, 11.7]]; |O − E| = 3.7.
    plain = chi2_independence(TABLE, correction=False).statistic
    yates = chi2_independence(TABLE, correction=True).statistic
    inverse = 1 / 7.7 + 1 / 6.3 + 1 / 14.3 + 1 / 11.7
    assert plain == pytest.approx(3.7 ** 2 * inverse, rel=1e-12)
    assert yates == pytest.approx(3.2 ** 2 * inverse, rel=1e-12)


def test_yates_never_crosses_the_expected_count():
    # |O − E| = 0.25 < 0.5: scipy moves O onto E (statistic 0), it does not overshoot.
    table = np.array([[10, 10], [10, 10.5]])
    for correction in (True, False):
        assert chi2_independence(table, correction).statistic == pytest.approx(
            stats.chi2_contingency(table, correction=correction)[0], abs=1e-12)


def test_chi2_larger_table_has_no_correction_and_matches_scipy():
    table = np.array([[12, 5, 9], [3, 14, 6]])
    ours = chi2_independence(table, correction=True)
    statistic, p_value, dof, _ = stats.chi2_contingency(table, correction=True)
    assert (ours.statistic, ours.dof, ours.corrected) == (pytest.approx(statistic), dof, False)
    assert ours.p_value == pytest.approx(p_value)


def test_chi2_of_a_table_with_an_empty_row_is_undefined():
    result = chi2_independence(np.array([[0, 0], [18, 8]]))
    assert math.isnan(result.statistic) and math.isnan(result.p_value)
    with pytest.raises(ValueError):
        stats.chi2_contingency(np.array([[0, 0], [18, 8]]))


def test_pearson_matches_scipy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.4 * x + rng.normal(size=40)
    ours = pearson(x, y)
    theirs = stats.pearsonr(x, y)
    assert ours.r == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)
    assert ours.n == 40


def test_pearson_drops_pairs_with_a_missing_value():
    x = np.array([1.0, 2.0, 3.0, 4.0, np.nan, 6.0])
    y = np.array([2.0, 1.0, 4.0, 3.0, 9.0, np.nan])
    theirs = stats.pearsonr([1, 2, 3, 4], [2, 1, 4, 3])
    ours = pearson(x, y)
    assert (ours.r, ours.n) == (pytest.approx(theirs.statistic), 4)
    assert ours.p_value == pytest.approx(theirs.pvalue)


def test_pearson_of_a_constant_or_too_few_pairs_is_nan():
    assert math.isnan(pearson([1, 2, 3], [5, 5, 5]).r)
    assert math.isnan(pearson([1, 2], [3, 4]).p_value)


def test_least_squares_line_recovers_an_exact_line_and_matches_numpy():
    assert least_squares_line([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx((2.0, 1.0))
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=30), rng.normal(size=30)
    assert least_squares_line(x, y) == pytest.approx(tuple(np.polyfit(x, y, 1)))


def test_mean_sd_by_hand():
    # CTT % of four repetitions: mean 25, deviations −5, 5, −10, 10 → SD sqrt(250/3).
    summary = mean_sd([20.0, 30.0, 15.0, 35.0, np.nan])
    assert summary.mean == pytest.approx(25.0)
    assert summary.sd == pytest.approx(math.sqrt(250 / 3))
    assert summary.n == 4
    assert math.isnan(mean_sd([1.0]).sd) and mean_sd([1.0]).mean == 1.0
    assert mean_sd([]).n == 0
