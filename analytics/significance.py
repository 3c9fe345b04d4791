"""Three classical tests the option analysis reports, computed by scipy.

- :func:`binomial_test`: an exact test of a count of successes against a chance rate
  (``scipy.stats.binomtest``);
- :func:`chi_square_goodness_of_fit`: Pearson's χ² of observed counts against expected ones
  (``scipy.stats.chisquare``);
- :func:`welch_t_test`: Welch's unequal-variance t-test of two means, with optional frequency
  weights (a value with weight w counts as w identical observations), so that millions of
  human answers that share a handful of values need not be expanded. The samples are reduced
  to their (weighted) mean, SD and size, and the test is
  :func:`analytics.populations.welch_test` of those summaries
  (``scipy.stats.ttest_ind_from_stats``), the project's one Welch test.

Each returns a small frozen dataclass. This module checks the inputs and keeps the project's
conventions where scipy has none: NaN results without observations instead of an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from analytics.populations import welch_test


@dataclass(frozen=True)
class BinomialTest:
    """``successes`` of ``trials`` against the chance rate ``chance``; ``share`` is the observed
    rate (NaN without trials) and ``p_value`` that of the ``alternative`` hypothesis."""

    successes: int
    trials: int
    chance: float
    share: float
    p_value: float
    alternative: str


def binomial_test(successes: int, trials: int, chance: float,
                  alternative: str = "two-sided") -> BinomialTest:
    """Exact binomial test of ``successes`` out of ``trials`` against rate ``chance``.

    ``alternative``: 'greater' (P(X ≥ k)), 'less' (P(X ≤ k)) or 'two-sided' (the total
    probability of every outcome no more likely than the one observed, with scipy's relative
    tolerance of 1e-7 for equally likely outcomes). NaN without trials (scipy refuses n = 0).
    """
    k, n = int(successes), int(trials)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= successes <= trials, got {k} of {n}")
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must lie in (0, 1), got {chance}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"unknown alternative {alternative!r}")
    if n == 0:
        return BinomialTest(k, n, chance, math.nan, math.nan, alternative)
    p = stats.binomtest(k, n, chance, alternative=alternative).pvalue
    return BinomialTest(k, n, chance, k / n, float(p), alternative)


@dataclass(frozen=True)
class ChiSquareTest:
    """Pearson's statistic, its degrees of freedom (categories − 1) and p-value."""

    statistic: float
    dof: int
    p_value: float
    total: int


def chi_square_goodness_of_fit(observed: ArrayLike,
                               expected_shares: ArrayLike | None = None) -> ChiSquareTest:
    """χ² = Σ (O − E)² / E of counts ``observed`` (k,) against ``expected_shares`` (k,; uniform
    when None) scaled to the same total, with k − 1 degrees of freedom
    (``scipy.stats.chisquare``). NaN without observations."""
    counts = np.asarray(observed, dtype=np.float64)
    if counts.ndim != 1 or len(counts) < 2:
        raise ValueError(f"observed must be a vector of at least two counts, got {counts.shape}")
    shares = (np.full(len(counts), 1.0 / len(counts)) if expected_shares is None
              else np.asarray(expected_shares, dtype=np.float64))
    if shares.shape != counts.shape or (shares <= 0).any():
        raise ValueError("expected shares must be positive, one per category")
    total = counts.sum()
    if total <= 0:
        return ChiSquareTest(math.nan, len(counts) - 1, math.nan, 0)
    result = stats.chisquare(counts, total * shares / shares.sum())
    return ChiSquareTest(float(result.statistic), len(counts) - 1, float(result.pvalue),
                         int(total))


@dataclass(frozen=True)
class WelchTest:
    """Welch's t-test of mean(x) − mean(y): the two means and (weighted) sizes, t, the
    Welch–Satterthwaite degrees of freedom and the two-sided p-value (NaN when either group
    has fewer than two observations or both have no variance)."""

    mean_x: float
    mean_y: float
    n_x: float
    n_y: float
    t: float
    dof: float
    p_value: float


def welch_t_test(x: ArrayLike, y: ArrayLike, x_weights: ArrayLike | None = None,
                 y_weights: ArrayLike | None = None) -> WelchTest:
    """Welch's t-test of two samples; ``*_weights`` are frequency weights (non-negative counts;
    None: each value once). Each sample is reduced to its mean, sample SD (divisor n − 1) and
    size n = Σ w, and the test is :func:`analytics.populations.welch_test` of those (t, the
    Welch–Satterthwaite dof and the two-sided p); the SD passes as √(s²), so t and dof can
    differ from a formula written on s² in the last bits.
    """
    mean_x, var_x, n_x = _weighted_moments(x, x_weights)
    mean_y, var_y, n_y = _weighted_moments(y, y_weights)
    if n_x < 2 or n_y < 2:
        return WelchTest(mean_x, mean_y, n_x, n_y, math.nan, math.nan, math.nan)
    test = welch_test(mean_x, math.sqrt(var_x), n_x, mean_y, math.sqrt(var_y), n_y)
    return WelchTest(mean_x, mean_y, n_x, n_y, float(test.t), float(test.df), float(test.p))


def _weighted_moments(values: ArrayLike, weights: ArrayLike | None) -> tuple[float, float, float]:
    """(mean, sample variance with divisor n − 1, n) of frequency-weighted values; NaN where
    undefined."""
    v = np.asarray(values, dtype=np.float64).ravel()
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != v.shape or (w < 0).any():
        raise ValueError("weights must be non-negative, one per value")
    n = float(w.sum())
    if n <= 0:
        return math.nan, math.nan, 0.0
    mean = float((w * v).sum() / n)
    variance = float((w * (v - mean) ** 2).sum() / (n - 1)) if n > 1 else math.nan
    return mean, variance, n
