"""Three classical tests the option analysis reports, written out from their formulas.

- :func:`binomial_test`: an exact test of a count of successes against a chance rate;
- :func:`chi_square_goodness_of_fit`: Pearson's χ² of observed counts against expected ones;
- :func:`welch_t_test`: Welch's unequal-variance t-test of two means, with optional frequency
  weights (a value with weight w counts as w identical observations), so that millions of
  human answers that share a handful of values need not be expanded.

Each returns a small frozen dataclass; p-values come from scipy's distributions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

#: Relative tolerance under which two binomial probabilities count as equally likely in the
#: two-sided test (the same rule as scipy's ``binomtest``, so ties are not lost to rounding).
_EQUALLY_LIKELY = 1e-7


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
    probability of every outcome no more likely than the one observed). NaN without trials.
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
    if alternative == "greater":
        p = stats.binom.sf(k - 1, n, chance)
    elif alternative == "less":
        p = stats.binom.cdf(k, n, chance)
    else:
        pmf = stats.binom.pmf(np.arange(n + 1), n, chance)
        p = pmf[pmf <= pmf[k] * (1 + _EQUALLY_LIKELY)].sum()
    return BinomialTest(k, n, chance, k / n, float(min(1.0, p)), alternative)


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
    when None) scaled to the same total. NaN without observations."""
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
    expected = total * shares / shares.sum()
    statistic = float(((counts - expected) ** 2 / expected).sum())
    dof = len(counts) - 1
    return ChiSquareTest(statistic, dof, float(stats.chi2.sf(statistic, dof)), int(total))


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
    None: each value once). With sample variances s² (divisor n − 1):

        t   = (m_x − m_y) / sqrt(s_x²/n_x + s_y²/n_y)
        dof = (s_x²/n_x + s_y²/n_y)² / ((s_x²/n_x)²/(n_x − 1) + (s_y²/n_y)²/(n_y − 1))
    """
    mean_x, var_x, n_x = _weighted_moments(x, x_weights)
    mean_y, var_y, n_y = _weighted_moments(y, y_weights)
    if n_x < 2 or n_y < 2:
        return WelchTest(mean_x, mean_y, n_x, n_y, math.nan, math.nan, math.nan)
    part_x, part_y = var_x / n_x, var_y / n_y
    spread = part_x + part_y
    if spread <= 0:
        return WelchTest(mean_x, mean_y, n_x, n_y, math.nan, math.nan, math.nan)
    t = (mean_x - mean_y) / math.sqrt(spread)
    dof = spread**2 / (part_x**2 / (n_x - 1) + part_y**2 / (n_y - 1))
    return WelchTest(mean_x, mean_y, n_x, n_y, t, dof, float(2 * stats.t.sf(abs(t), dof)))


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
