"""Comparing a model with human populations (the PATCH recipe): pooling, Welch's test,
percentiles and ranks, on plain numpy arrays.

- :func:`normal_interval` and :func:`standard_error`: the normal-theory 95% interval
  estimate ± Z_95·SE, with SE = SD/√n for a mean; every such interval of the project is
  drawn by them.
- :func:`pool_inverse_variance`: a fixed-effect pool of estimates θ_i with standard errors
  SE_i, θ̄ = Σ wᵢθᵢ / Σ wᵢ with wᵢ = 1/SEᵢ², SE(θ̄) = 1/√Σ wᵢ, 95% CI θ̄ ± 1.96·SE(θ̄).
- :func:`pool_random_effects`: the DerSimonian–Laird random-effects pool, which widens the
  interval by the estimates' disagreement beyond their SEs (prompt sensitivity), and
  :func:`cluster_estimate`, one variant's repetitions taken as one measurement;
- :func:`welch_test`: Welch's unequal-variance t-test of two means from their summary
  statistics (mean, SD, n), with the Welch–Satterthwaite degrees of freedom; the one Welch
  test of the project (``analytics.significance.welch_t_test`` reduces raw, weighted samples
  to these statistics).
- :func:`percentile_in`: where a value falls inside a population described by its quantile
  function (the quantiles at equally spaced levels, as stored per population).
- :func:`rank_changes`: ranks of the same entries under two scores and how they move.
- :func:`bootstrap_mean_ci`: the percentile-bootstrap confidence interval of a mean, the
  interval plotting libraries draw around a mean by default (seaborn's ``errorbar="ci"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from analytics.irt import FloatArray

#: Normal quantile of a two-sided 95% interval, rounded as the papers do.
Z_95 = 1.96
#: Resamples of :func:`bootstrap_mean_ci` (seaborn's default ``n_boot``).
BOOTSTRAP_RESAMPLES = 1000
#: Levels (in %) of the stored quantile functions: 0 (minimum), 1, …, 99, 100 (maximum).
QUANTILE_LEVELS: FloatArray = np.arange(0.0, 101.0)


@dataclass(frozen=True)
class PooledEstimate:
    """An inverse-variance pool: θ̄, SE(θ̄), the 95% CI and how many estimates went in.

    Every field is NaN (``n`` 0) when no estimate had a finite value and a positive finite SE.
    """

    theta: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    #: The between-estimate variance τ² a random-effects pool added (0 for a fixed effect).
    tau2: float = 0.0


def bootstrap_mean_ci(values: ArrayLike, rng: np.random.Generator, level: float = 95.0,
                      n_resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """Percentile-bootstrap ``level``% confidence interval of the mean of ``values`` (n,).

    ``n_resamples`` resamples of n values drawn with replacement (the indices are
    ``rng.integers(0, n, (n_resamples, n))``, one row per resample); the interval is the
    (100 − level)/2 and (100 + level)/2 percentiles (``numpy.percentile``, linear) of their
    means. NaN values are left out first; (NaN, NaN) with fewer than two values left (one value
    says nothing about how its mean varies).
    """
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size < 2:
        return float("nan"), float("nan")
    means = finite[rng.integers(0, finite.size, (n_resamples, finite.size))].mean(axis=1)
    tail = (100.0 - level) / 2
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


def standard_error(sd: ArrayLike, n: ArrayLike) -> FloatArray:
    """Standard error of a mean, SD/√n, for broadcast arrays ``sd`` (sample SD, the values'
    unit) and ``n`` (group sizes); NaN where the SD is NaN (as it is for fewer than two
    values)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(sd, dtype=np.float64) / np.sqrt(n)


def normal_interval(estimate: ArrayLike, se: ArrayLike,
                    z: float = Z_95) -> tuple[FloatArray, FloatArray]:
    """The normal-theory interval (estimate − z·SE, estimate + z·SE) of broadcast arrays
    ``estimate`` and ``se`` (same unit); with the default ``z`` the 95% confidence interval.
    For a mean, ``se`` is :func:`standard_error` (SD/√n). NaN where either is NaN."""
    estimate = np.asarray(estimate, dtype=np.float64)
    half = z * np.asarray(se, dtype=np.float64)
    return estimate - half, estimate + half


def pool_inverse_variance(theta: ArrayLike, se: ArrayLike) -> PooledEstimate:
    """Pool estimates ``theta`` (shape (n,)) with standard errors ``se`` (shape (n,)) by
    inverse-variance weighting (fixed effect).

    θ̄ = Σ wᵢθᵢ / Σ wᵢ with wᵢ = 1/SEᵢ²; SE(θ̄) = 1/√Σ wᵢ; CI θ̄ ± Z_95·SE(θ̄). Estimates whose θ
    is not finite or whose SE is not finite and positive carry no usable weight and are left
    out (``n`` counts those kept). Units are those of ``theta``.
    """
    theta = np.asarray(theta, dtype=np.float64).ravel()
    se = np.asarray(se, dtype=np.float64).ravel()
    if theta.shape != se.shape:
        raise ValueError(f"theta has {theta.size} values and se {se.size}")
    keep = np.isfinite(theta) & np.isfinite(se) & (se > 0)
    if not keep.any():
        return PooledEstimate(np.nan, np.nan, np.nan, np.nan, 0)
    weights = 1.0 / se[keep] ** 2
    pooled = float(np.sum(weights * theta[keep]) / np.sum(weights))
    pooled_se = float(1.0 / np.sqrt(np.sum(weights)))
    low, high = normal_interval(pooled, pooled_se)
    return PooledEstimate(pooled, pooled_se, float(low), float(high), int(keep.sum()))


def pool_random_effects(theta: ArrayLike, se: ArrayLike) -> PooledEstimate:
    """Pool estimates ``theta`` (shape (k,)) with standard errors ``se`` (shape (k,)) by a
    random-effects model with the DerSimonian–Laird τ².

    With wᵢ = 1/SEᵢ² and the fixed-effect θ̂_FE, Cochran's Q = Σ wᵢ(θᵢ − θ̂_FE)² and
    C = Σ wᵢ − Σ wᵢ²/Σ wᵢ, the between-estimate variance is τ² = max(0, (Q − (k − 1))/C);
    the pool weighs each estimate by wᵢ* = 1/(SEᵢ² + τ²): θ̄ = Σ wᵢ*θᵢ / Σ wᵢ*,
    SE(θ̄) = 1/√Σ wᵢ*, CI θ̄ ± Z_95·SE(θ̄). When the estimates agree no more than their SEs
    allow (Q ≤ k − 1) τ² is 0 and the pool is :func:`pool_inverse_variance`'s; the more they
    disagree, the wider the interval. Estimates are kept as in :func:`pool_inverse_variance`.
    """
    theta = np.asarray(theta, dtype=np.float64).ravel()
    se = np.asarray(se, dtype=np.float64).ravel()
    fixed = pool_inverse_variance(theta, se)
    if fixed.n < 2:
        return fixed
    keep = np.isfinite(theta) & np.isfinite(se) & (se > 0)
    theta, variance = theta[keep], se[keep] ** 2
    weights = 1.0 / variance
    q = float(np.sum(weights * (theta - fixed.theta) ** 2))
    c = float(weights.sum() - np.sum(weights ** 2) / weights.sum())
    tau2 = max(0.0, (q - (theta.size - 1)) / c) if c > 0 else 0.0
    if tau2 == 0.0:
        return fixed
    spread = 1.0 / (variance + tau2)
    pooled = float(np.sum(spread * theta) / np.sum(spread))
    pooled_se = float(1.0 / np.sqrt(np.sum(spread)))
    low, high = normal_interval(pooled, pooled_se)
    return PooledEstimate(pooled, pooled_se, float(low), float(high), int(theta.size), tau2)


def cluster_estimate(theta: ArrayLike, se: ArrayLike) -> tuple[float, float]:
    """One prompt variant's repetitions (shape (n,) each) as one cluster: the mean θ, and the
    SE of one measurement, √(mean SEᵢ²). The repetitions answer the same items, so their
    measurement errors are shared, not independent: pooling them by inverse variance would
    divide the SE by about √n, as if each repetition were a new test. NaN without a finite
    pair."""
    theta = np.asarray(theta, dtype=np.float64).ravel()
    se = np.asarray(se, dtype=np.float64).ravel()
    keep = np.isfinite(theta) & np.isfinite(se) & (se > 0)
    if not keep.any():
        return np.nan, np.nan
    return float(theta[keep].mean()), float(np.sqrt(np.mean(se[keep] ** 2)))


@dataclass(frozen=True, eq=False)
class WelchResult:
    """Welch's t-test, each field of the broadcast shape of the inputs: t, df (Welch–
    Satterthwaite) and the two-sided p-value."""

    t: FloatArray
    df: FloatArray
    p: FloatArray


def welch_test(mean1: ArrayLike, sd1: ArrayLike, n1: ArrayLike,
               mean2: ArrayLike, sd2: ArrayLike, n2: ArrayLike) -> WelchResult:
    """Welch's two-sample t-test of mean1 − mean2 from summary statistics (broadcast arrays).

    With vᵢ = sdᵢ²/nᵢ (the squared standard error of mean i):
    t = (mean1 − mean2)/√(v1 + v2), df = (v1 + v2)² / (v1²/(n1 − 1) + v2²/(n2 − 1)),
    p = 2·P(T_df > |t|). ``sd`` are sample SDs (ddof 1). NaN where a side has n < 2 or both
    variances are 0. t and p are ``scipy.stats.ttest_ind_from_stats(..., equal_var=False)``'s;
    scipy does not return df, so the Welch–Satterthwaite formula is written here.
    """
    mean1, sd1, n1, mean2, sd2, n2 = (np.asarray(v, dtype=np.float64)
                                      for v in (mean1, sd1, n1, mean2, sd2, n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        v1, v2 = sd1 ** 2 / n1, sd2 ** 2 / n2
        total = v1 + v2
        ok = (n1 >= 2) & (n2 >= 2) & (total > 0)
        df = np.where(ok, total ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1)), np.nan)
        # scipy answers where a side has n < 2 (it takes df = 1 there); this test does not.
        scipy_test = stats.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2, equal_var=False)
        t = np.where(ok, scipy_test.statistic, np.nan)
        p = np.where(ok, scipy_test.pvalue, np.nan)
    return WelchResult(t, df, p)


def intervals_overlap(low1: ArrayLike, high1: ArrayLike, low2: ArrayLike,
                      high2: ArrayLike) -> np.ndarray:
    """Whether the intervals [low1, high1] and [low2, high2] share a point (broadcast arrays;
    False where an end is NaN)."""
    low1, high1, low2, high2 = (np.asarray(v, dtype=np.float64) for v in (low1, high1, low2, high2))
    return (low1 <= high2) & (low2 <= high1)


def percentile_in(values: ArrayLike, quantiles: ArrayLike,
                  levels: ArrayLike = QUANTILE_LEVELS) -> FloatArray:
    """Percent of a population below each of ``values`` (0–100), from its quantile function.

    ``quantiles`` (shape (k,), non-decreasing) are the population's quantiles at ``levels``
    (shape (k,), in %, from 0 = minimum to 100 = maximum). Between two stored quantiles the
    quantile function is taken as linear. Ties count half, as
    ``scipy.stats.percentileofscore(kind="mean")`` does: the result is the mean of the share
    strictly below and the share at or below a value. Values below the minimum give 0, above
    the maximum 100; NaN when a value or the population's quantiles are NaN.
    Returns an array of the shape of ``values``.
    """
    x = np.asarray(values, dtype=np.float64)
    q = np.asarray(quantiles, dtype=np.float64).ravel()
    levels = np.asarray(levels, dtype=np.float64).ravel()
    if q.shape != levels.shape:
        raise ValueError(f"{q.size} quantiles for {levels.size} levels")
    if q.size == 0 or not np.all(np.isfinite(q)):
        return np.full(x.shape, np.nan)
    below = _level_at(x, q, levels, "left")
    at_or_below = _level_at(x, q, levels, "right")
    return np.where(np.isnan(x), np.nan, (below + at_or_below) / 2.0)


def _level_at(x: FloatArray, q: FloatArray, levels: FloatArray,
              side: Literal["left", "right"]) -> FloatArray:
    """The quantile function inverted at ``x``: with side 'left' the level where the values
    equal to x begin (share strictly below), with 'right' where they end (share at or below)."""
    index = np.searchsorted(q, x, side=side)
    inner = (index > 0) & (index < q.size)
    upper = np.clip(index, 1, q.size - 1)
    q0, q1 = q[upper - 1], q[upper]
    l0, l1 = levels[upper - 1], levels[upper]
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(q1 > q0, (x - q0) / (q1 - q0), 1.0)
    inside = l0 + np.clip(fraction, 0.0, 1.0) * (l1 - l0)
    return np.where(inner, inside, np.where(index <= 0, levels[0], levels[-1]))


def rank_changes(first: ArrayLike, second: ArrayLike) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """Ranks of the same n entries by two scores (shape (n,) each, higher is better) and the
    change between them.

    Returns (rank by ``first``, rank by ``second``, rank by first − rank by second), integer
    arrays of shape (n,). Rank 1 is the highest score; ties share the best rank of their group
    (competition ranking, 1, 2, 2, 4). A positive change means the entry ranks higher by
    ``second`` than by ``first``. Entries with a NaN score rank last.
    """
    first_rank = _competition_rank(np.asarray(first, dtype=np.float64))
    second_rank = _competition_rank(np.asarray(second, dtype=np.float64))
    return first_rank, second_rank, first_rank - second_rank


def _competition_rank(score: FloatArray) -> np.ndarray:
    """1 for the highest score, ties sharing their best rank, NaN last."""
    filled = np.where(np.isnan(score), -np.inf, score)
    return stats.rankdata(-filled, method="min").astype(np.int64)


@dataclass(frozen=True, eq=False)
class GroupMoments:
    """Per group, arrays of shape (n_groups,): count, mean, sample SD (ddof 1; NaN below two
    members) and the standard error of the mean, SD/√n (NaN for empty groups)."""

    n: np.ndarray
    mean: FloatArray
    sd: FloatArray
    se: FloatArray


def moments_from_sums(n: np.ndarray, sums: FloatArray, squares: FloatArray,
                      shift: float) -> GroupMoments:
    """Moments from per-group counts, sums and sums of squares of (value − ``shift``), each of
    shape (n_groups,). A shift near the values' mean keeps the variance free of cancellation."""
    with np.errstate(divide="ignore", invalid="ignore"):
        centred = sums / n
        variance = (squares - sums * centred) / (n - 1)
        sd = np.where(n > 1, np.sqrt(np.maximum(variance, 0.0)), np.nan)
        return GroupMoments(n, np.where(n > 0, centred + shift, np.nan), sd,
                            standard_error(sd, n))


def grouped_moments(values: ArrayLike, codes: ArrayLike, n_groups: int,
                    shift: float | None = None) -> GroupMoments:
    """Count, mean, SD and SE of the mean of ``values`` (shape (n,)) in each group, ``codes``
    (shape (n,), integers in [0, n_groups)) naming each value's group.

    Sums of v − shift and of its square (``shift`` defaults to the overall mean), so offsets
    such as notas near 500 cost no precision when the groups' means lie near one another.
    """
    values = np.asarray(values, dtype=np.float64)
    codes = np.asarray(codes)
    if shift is None:
        shift = float(values.mean()) if values.size else 0.0
    centred = values - shift
    n = np.bincount(codes, minlength=n_groups)
    # With weights bincount returns floats (numpy's stubs type every bincount as integers).
    sums = cast(FloatArray, np.bincount(codes, weights=centred, minlength=n_groups))
    squares = cast(FloatArray, np.bincount(codes, weights=centred * centred, minlength=n_groups))
    return moments_from_sums(n, sums, squares, shift)


def count_moments(counts: ArrayLike, values: ArrayLike) -> GroupMoments:
    """Moments of discrete data given as counts: ``counts`` (n_groups, m) of how many members
    of each group take each of the m ``values`` (shape (m,))."""
    counts = np.asarray(counts, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    shift = float(values.mean()) if values.size else 0.0
    centred = values - shift
    n = counts.sum(axis=1).astype(np.int64)
    return moments_from_sums(n, counts @ centred, counts @ (centred * centred), shift)


def _interpolate(counts: np.ndarray, levels: FloatArray) -> tuple[np.ndarray, np.ndarray,
                                                                   FloatArray]:
    """For groups of ``counts`` members (shape (g,)): the 0-based ranks below and above the
    position h = (m − 1)·p/100 of each level, and the fraction of the way between them."""
    position = (np.maximum(counts, 1)[:, None] - 1) * (levels[None, :] / 100.0)
    low = np.floor(position)
    high = np.minimum(low + 1, np.maximum(counts, 1)[:, None] - 1)
    return low.astype(np.int64), high.astype(np.int64), position - low


def sorted_group_quantiles(sorted_values: ArrayLike, sorted_codes: ArrayLike, n_groups: int,
                           levels: ArrayLike = QUANTILE_LEVELS) -> FloatArray:
    """Exact quantiles of each group: shape (n_groups, k) for the ``levels`` (shape (k,), in %);
    NaN rows for empty groups.

    ``sorted_values`` (shape (n,)) are in ascending order and ``sorted_codes`` (shape (n,),
    integers in [0, n_groups)) name the group of each, so one sort of the values serves every
    grouping; each grouping then costs one stable (radix) sort of its small integer codes.
    The quantile at level p of a group of m sorted values x_0 ≤ … ≤ x_{m−1} interpolates
    linearly at position h = (m − 1)·p/100: x_⌊h⌋ + (h − ⌊h⌋)·(x_⌊h⌋+1 − x_⌊h⌋), numpy's
    default (``method='linear'``) and DuckDB's ``quantile_cont``.
    """
    values = np.asarray(sorted_values, dtype=np.float64)
    codes = np.asarray(sorted_codes)
    levels = np.asarray(levels, dtype=np.float64)
    if values.size == 0:
        return np.full((n_groups, levels.size), np.nan)
    # Stable: within each group the values keep their ascending order (one group: as given).
    by_group = (np.arange(values.size) if n_groups == 1
                else np.argsort(codes, kind="stable"))
    counts = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[:, None]
    low, high, fraction = _interpolate(counts, levels)
    last = values.size - 1
    x_low = values[by_group[np.minimum(starts + low, last)]]
    x_high = values[by_group[np.minimum(starts + high, last)]]
    return np.where(counts[:, None] > 0, x_low + fraction * (x_high - x_low), np.nan)


def grouped_quantiles(values: ArrayLike, codes: ArrayLike, n_groups: int,
                      levels: ArrayLike = QUANTILE_LEVELS) -> FloatArray:
    """:func:`sorted_group_quantiles` of values in any order (sorted here first)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values)
    return sorted_group_quantiles(values[order], np.asarray(codes)[order], n_groups, levels)


def count_quantiles(counts: ArrayLike, values: ArrayLike,
                    levels: ArrayLike = QUANTILE_LEVELS) -> FloatArray:
    """Exact quantiles (the rule of :func:`sorted_group_quantiles`) of discrete data given as
    counts: ``counts`` (n_groups, m) of the m ascending ``values`` (shape (m,)). Returns
    (n_groups, k); NaN rows for empty groups."""
    counts = np.asarray(counts, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    levels = np.asarray(levels, dtype=np.float64)
    totals = counts.sum(axis=1)
    low, high, fraction = _interpolate(totals, levels)
    out = np.full((counts.shape[0], levels.size), np.nan)
    for group in np.flatnonzero(totals):
        cumulative = np.cumsum(counts[group])
        # The member of 0-based rank r holds the first value whose cumulative count exceeds r.
        x_low = values[np.searchsorted(cumulative, low[group], side="right")]
        x_high = values[np.searchsorted(cumulative, high[group], side="right")]
        out[group] = x_low + fraction[group] * (x_high - x_low)
    return out
