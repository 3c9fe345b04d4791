"""Stored model patterns to responses, and their bounded ML re-scoring (``enem.rescoring``)."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.ability import MLEstimator
from analytics.irt import ItemBank
from enem.codebook import CODE_LABELS, SCHOOL_TYPES
from enem.rescoring import BOUND_TOLERANCE, ml_rescore, ml_rescore_patterns, theta_at_bound
from enem.responses import stored_patterns_to_responses
from enem.scoring import ScoringOptions


def _one_by_one(patterns, usable: np.ndarray) -> np.ndarray:
    """The reading spelled out pattern by pattern, mark by mark (the reference)."""
    out = np.full((len(patterns), usable.size), np.nan)
    for row, text in enumerate(patterns):
        if not isinstance(text, str) or len(text) not in (usable.size, int(usable.sum())):
            continue
        marks = [1.0 if ch == "1" else 0.0 if ch == "0" else np.nan for ch in text]
        columns = np.arange(usable.size) if len(text) == usable.size else np.flatnonzero(usable)
        out[row, columns] = marks
    return out


def _bank(n_items: int, unusable: tuple[int, ...] = (), scaling: float = 1.0) -> ItemBank:
    rng = np.random.default_rng(7)
    a = rng.uniform(0.8, 2.5, n_items)
    b = rng.normal(0.0, 1.0, n_items)
    c = rng.uniform(0.05, 0.25, n_items)
    a[list(unusable)] = np.nan
    return ItemBank.from_arrays(a, b, c, scaling=scaling)


def test_stored_patterns_read_like_one_mark_at_a_time():
    usable = np.array([True, False, True, True, False, True])
    patterns = ["101.10", "0110", "1*0", None, float("nan"), "", "1.01", "1é01", "10é1x0",
                "1111111", "000000"]
    got = stored_patterns_to_responses(patterns, usable)
    np.testing.assert_array_equal(got, _one_by_one(patterns, usable))
    # The short form fills the items with parameters only; the others stay NaN.
    np.testing.assert_array_equal(got[1], [0, np.nan, 1, 1, np.nan, 0])
    assert np.isnan(got[[2, 3, 4, 5, 9]]).all()


def test_stored_patterns_when_every_item_has_parameters_and_when_none_does():
    every = np.ones(4, bool)
    patterns = ["1010", "01.1", "101"]
    np.testing.assert_array_equal(stored_patterns_to_responses(patterns, every),
                                  _one_by_one(patterns, every))
    none = np.zeros(3, bool)
    patterns = ["", "010", "01"]
    np.testing.assert_array_equal(stored_patterns_to_responses(patterns, none),
                                  _one_by_one(patterns, none))
    assert stored_patterns_to_responses([], every).shape == (0, 4)


def test_ml_rescore_is_the_bounded_ml_with_bound_estimates_left_out():
    bank = _bank(12)
    responses = np.array([[1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1],
                          [1] * 12, [0] * 12, [np.nan] * 12], dtype=float)
    rescored = ml_rescore(responses, bank)
    expected = MLEstimator().estimate(responses, bank)
    assert rescored.theta[0] == expected.theta[0] and rescored.se[0] == expected.se[0]
    np.testing.assert_array_equal(rescored.at_bound, [False, True, True, False])
    assert np.isnan(rescored.theta[1:]).all() and np.isnan(rescored.se[1:3]).all()


def test_ml_rescore_patterns_scores_with_the_runs_constant_d():
    bank = _bank(8, unusable=(2, 5), scaling=1.7)
    patterns = ["10110100", "101001", "11111111", "1x"]
    options = ScoringOptions(scaling=1.7)
    rescored = ml_rescore_patterns(patterns, bank.a, bank.b, bank.c, options)
    expected = MLEstimator().estimate(_one_by_one(patterns, bank.usable), bank)
    np.testing.assert_array_equal(rescored.theta[:2], expected.theta[:2])
    np.testing.assert_array_equal(rescored.se[:2], expected.se[:2])
    np.testing.assert_array_equal(rescored.at_bound, [False, False, True, False])
    unscaled = ml_rescore_patterns(patterns, bank.a, bank.b, bank.c, ScoringOptions())
    assert not np.allclose(unscaled.theta[:2], rescored.theta[:2])


def test_theta_at_bound_within_the_tolerance():
    theta = np.array([-6.0, -6 + BOUND_TOLERANCE / 2, -6 + 2 * BOUND_TOLERANCE, 0.0,
                      6 - BOUND_TOLERANCE, 6.0, np.nan])
    np.testing.assert_array_equal(theta_at_bound(theta, (-6.0, 6.0)),
                                  [True, True, False, False, True, True, False])


def test_codebook_labels_every_code_once_per_column():
    assert SCHOOL_TYPES["2"] == "public" and SCHOOL_TYPES["3"] == "private"
    assert CODE_LABELS["school_type"] is SCHOOL_TYPES
    assert CODE_LABELS["father_education"] is CODE_LABELS["mother_education"]
    assert sorted(CODE_LABELS["age_band"], key=int) == [str(code) for code in range(1, 21)]
    for labels in CODE_LABELS.values():
        assert all(isinstance(words, str) and words for words in labels.values())


@pytest.mark.parametrize("kind", sorted(CODE_LABELS))
def test_population_words_come_from_the_codebook(kind):
    from dashboard.populations.labels import value_label

    code, words = next(iter(CODE_LABELS[kind].items()))
    assert words in value_label(kind, code)
