"""analytics.ctt: number correct, p-values, point-biserials and the discrimination index."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.ctt import (
    ctt_score,
    discrimination_index,
    item_p_values,
    point_biserial,
    proportion_correct,
    rank_groups,
)

NAN = np.nan
SMALL = np.array([
    [1, 0, 1, NAN],
    [1, 1, 0, 0],
    [0, 0, NAN, 1],
    [NAN, NAN, NAN, NAN],
])


def test_scores_and_proportions_by_hand():
    np.testing.assert_array_equal(ctt_score(SMALL), [2, 2, 1, 0])
    np.testing.assert_allclose(proportion_correct(SMALL)[:3], [2 / 3, 2 / 4, 1 / 3])
    assert np.isnan(proportion_correct(SMALL)[3])
    np.testing.assert_allclose(item_p_values(SMALL), [2 / 3, 1 / 3, 1 / 2, 1 / 2])
    assert ctt_score([1, 0, 1]).shape == (1,)


def _slow_point_biserial(responses, total, corrected):
    out = []
    for j in range(responses.shape[1]):
        keep = np.isfinite(responses[:, j]) & np.isfinite(total)
        x = responses[keep, j]
        y = total[keep] - (x if corrected else 0)
        if x.std() == 0 or y.std() == 0:
            out.append(np.nan)
        else:
            out.append(np.corrcoef(x, y)[0, 1])
    return np.array(out)


@pytest.mark.parametrize("corrected", [True, False])
def test_point_biserial_matches_corrcoef_loop(corrected):
    rng = np.random.default_rng(0)
    ability = rng.normal(size=400)
    responses = (rng.random((400, 12)) < 1 / (1 + np.exp(-(ability[:, None]
                                                        - np.linspace(-2, 2, 12))))).astype(float)
    responses[rng.random(responses.shape) < 0.1] = np.nan
    got = point_biserial(responses, corrected=corrected)
    want = _slow_point_biserial(responses, ctt_score(responses), corrected)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_point_biserial_with_external_total_and_missing_total():
    rng = np.random.default_rng(1)
    responses = (rng.random((100, 5)) < 0.5).astype(float)
    theta = rng.normal(size=100)
    theta[3] = np.nan
    got = point_biserial(responses, total=theta, corrected=False)
    np.testing.assert_allclose(got, _slow_point_biserial(responses, theta, False), rtol=1e-10)


def test_point_biserial_is_nan_for_constant_item_or_total():
    responses = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 0, 1.0]])
    got = point_biserial(responses, corrected=False)
    assert np.isnan(got[0]) and np.all(np.isfinite(got[1:]))
    constant_total = point_biserial(responses, total=np.full(4, 2.0), corrected=False)
    assert np.all(np.isnan(constant_total))


def test_point_biserial_hand_value():
    # Item (1, 1, 0, 0) against total (3, 2, 2, 1): means 0.5 and 2, cov = (0.5 + 0 − 0 + 0.5)/4
    # = 0.25, var x = 0.25, var y = (1 + 0 + 0 + 1)/4 = 0.5, r = 0.25 / sqrt(0.125) = 1/√2.
    responses = np.array([[1.0], [1.0], [0.0], [0.0]])
    got = point_biserial(responses, total=np.array([3.0, 2.0, 2.0, 1.0]), corrected=False)
    assert got[0] == pytest.approx(1 / np.sqrt(2), rel=1e-12)


def test_discrimination_index_by_hand():
    # 8 examinees, group fraction 0.25 → groups of 2. Ranking by score: bottom rows 5, 2;
    # top rows 0, 6 (score 0.9 and 1.5).
    responses = np.array([[1, 1], [0, 1], [0, 0], [1, 0], [1, 1], [0, 0], [1, NAN], [0, 1.0]])
    score = np.array([0.9, 0.1, -1.0, 0.2, 0.5, -2.0, 1.5, 0.3])
    got = discrimination_index(responses, score, group_fraction=0.25)
    np.testing.assert_allclose(got, [1.0 - 0.0, 1.0 - 0.0])


def test_discrimination_index_group_size_is_ceiling_and_ties_are_stable():
    # n = 5, fraction 0.3 → ceil(1.5) = 2 per group. All scores tie: the stable order puts rows
    # 0, 1 at the bottom and rows 3, 4 at the top.
    responses = np.array([[0.0], [0.0], [1.0], [1.0], [1.0]])
    assert discrimination_index(responses, np.zeros(5), 0.3)[0] == pytest.approx(1.0)
    # 0.3 · 10 is 3.0000000000000004 in binary; the group is still 3, not 4.
    responses = np.array([[0.0]] * 3 + [[1.0]] * 7)
    assert discrimination_index(responses, np.arange(10.0), 0.3)[0] == pytest.approx(1.0)


def test_discrimination_index_skips_examinees_without_a_score():
    responses = np.array([[1.0], [0.0], [1.0], [0.0]])
    score = np.array([np.nan, 0.0, 1.0, np.nan])
    assert discrimination_index(responses, score, 0.5)[0] == pytest.approx(1.0)


@pytest.mark.parametrize("fraction", [0.0, 0.51, -0.1])
def test_discrimination_index_validates_fraction(fraction):
    with pytest.raises(ValueError, match="group_fraction"):
        discrimination_index(np.zeros((4, 2)), np.arange(4.0), fraction)


def test_discrimination_index_within_bounds_on_random_data():
    rng = np.random.default_rng(2)
    responses = (rng.random((101, 9)) < 0.6).astype(float)
    got = discrimination_index(responses, rng.normal(size=101))
    assert np.all((got >= -1) & (got <= 1))


def test_complete_matrices_take_the_same_values_as_the_masked_path():
    rng = np.random.default_rng(5)
    dense = (rng.random((400, 7)) < rng.uniform(0.2, 0.8, 7)).astype(float)
    # One extra item nobody answered forces the masked computation for the other columns.
    masked = np.column_stack([dense, np.full(400, np.nan)])
    total = dense.sum(axis=1)
    np.testing.assert_allclose(item_p_values(dense), item_p_values(masked)[:7], atol=1e-12)
    np.testing.assert_allclose(point_biserial(dense, total), point_biserial(masked, total)[:7],
                               atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fraction", [0.01, 0.25, 0.3, 0.5])
def test_rank_groups_equal_the_ends_of_a_stable_sort(seed, fraction):
    """The partition-based groups are the first and last ceil(f·n) rows of a stable argsort
    (heavy ties, NaN scores left out), whatever the ties at the edges."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 6, 997).astype(float)
    score[rng.random(997) < 0.1] = np.nan
    ranked = np.flatnonzero(np.isfinite(score))
    ranked = ranked[np.argsort(score[ranked], kind="stable")]
    size = int(np.ceil(fraction * ranked.size - 1e-9))
    low, high = rank_groups(score, fraction)
    assert np.flatnonzero(low).tolist() == sorted(ranked[:size].tolist())
    assert np.flatnonzero(high).tolist() == sorted(ranked[-size:].tolist())


def test_rank_groups_are_none_without_finite_scores():
    assert rank_groups(np.full(4, np.nan), 0.25) is None
