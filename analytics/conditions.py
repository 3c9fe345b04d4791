"""Comparing one model under two conditions (prompt language, shots, repetitions, …): the mean
of each condition and the difference between two, on plain numpy arrays.

A condition's values are one number per response pattern (θ or percent correct), one pattern
per repetition (a sampling seed or an option shuffle) of a run. Two conditions are *paired*
when the same run answered both with the same repetitions (seed 7 in Portuguese and seed 7 in
English): the difference is then read from the per-repetition differences, which removes what
the repetition shares. Otherwise (different runs) the two groups are independent.

- :func:`level_mean`: mean, SD, n and the normal-theory 95% interval mean ± 1.96·SD/√n, the
  interval the rest of the project draws around a mean
  (:func:`analytics.populations.normal_interval`).
- :func:`paired_difference`: mean of the pairs' differences with the paired t interval and
  p-value (``scipy.stats.ttest_rel``).
- :func:`welch_difference`: difference of two independent means with Welch's t interval and
  p-value (``scipy.stats.ttest_ind(equal_var=False)``).

Both differences are *second − first*. A difference is NaN when a side has fewer than two
values; when every paired difference (or both groups) has no spread, the interval collapses to
the difference itself and the p-value is NaN (no test is possible, and none is needed to see it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from analytics.populations import normal_interval, standard_error

#: Confidence level of every interval of this module.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class LevelMean:
    """The values of one condition: their count, mean, sample SD (ddof 1), SE = SD/√n and the
    95% interval mean ± 1.96·SE (NaN SD and interval for fewer than two values)."""

    n: int
    mean: float
    sd: float
    se: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class MeanDifference:
    """second − first: the difference of means, its SE, the 95% t interval, the two-sided
    p-value, the t distribution's degrees of freedom, the values on each side (pairs, when
    paired) and whether the pairs were used."""

    difference: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    df: float
    n_first: int
    n_second: int
    paired: bool


def _finite(values: ArrayLike) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64).ravel()
    return values[np.isfinite(values)]


def level_mean(values: ArrayLike) -> LevelMean:
    """Summarise ``values`` (shape (n,), any unit; NaN left out) as a :class:`LevelMean`."""
    values = _finite(values)
    n = int(values.size)
    if n == 0:
        return LevelMean(0, np.nan, np.nan, np.nan, np.nan, np.nan)
    mean = float(values.mean())
    sd = float(values.std(ddof=1)) if n > 1 else np.nan
    se = float(standard_error(sd, n))
    low, high = normal_interval(mean, se)
    return LevelMean(n, mean, sd, se, float(low), float(high))


def _no_difference(n_first: int, n_second: int, paired: bool) -> MeanDifference:
    return MeanDifference(np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, n_first, n_second,
                          paired)


def paired_difference(first: ArrayLike, second: ArrayLike) -> MeanDifference:
    """Mean of ``second[i] − first[i]`` over the pairs (shape (n,) each, the same unit; a pair
    with a NaN side is left out), its SE = SD(d)/√n and the paired t interval on n − 1 degrees
    of freedom."""
    first = np.asarray(first, dtype=np.float64).ravel()
    second = np.asarray(second, dtype=np.float64).ravel()
    if first.shape != second.shape:
        raise ValueError(f"{first.size} first values and {second.size} second: not pairs")
    keep = np.isfinite(first) & np.isfinite(second)
    first, second = first[keep], second[keep]
    n = int(first.size)
    if n < 2:
        return _no_difference(n, n, True)
    differences = second - first
    mean = float(differences.mean())
    se = float(differences.std(ddof=1) / np.sqrt(n))
    if se == 0:
        return MeanDifference(mean, 0.0, mean, mean, np.nan, n - 1, n, n, True)
    test = stats.ttest_rel(second, first)
    interval = test.confidence_interval(CONFIDENCE)
    return MeanDifference(mean, se, float(interval.low), float(interval.high),
                          float(test.pvalue), float(test.df), n, n, True)


def welch_difference(first: ArrayLike, second: ArrayLike) -> MeanDifference:
    """mean(second) − mean(first) of two independent groups (shapes (n1,), (n2,), the same
    unit; NaN left out), its SE = √(s1²/n1 + s2²/n2) and Welch's t interval on the
    Welch–Satterthwaite degrees of freedom."""
    first, second = _finite(first), _finite(second)
    n1, n2 = int(first.size), int(second.size)
    if n1 < 2 or n2 < 2:
        return _no_difference(n1, n2, False)
    mean = float(second.mean() - first.mean())
    se = float(np.sqrt(first.var(ddof=1) / n1 + second.var(ddof=1) / n2))
    if se == 0:
        return MeanDifference(mean, 0.0, mean, mean, np.nan, np.nan, n1, n2, False)
    test = stats.ttest_ind(second, first, equal_var=False)
    interval = test.confidence_interval(CONFIDENCE)
    return MeanDifference(mean, se, float(interval.low), float(interval.high),
                          float(test.pvalue), float(test.df), n1, n2, False)
