"""The statistics behind the paper's appendix tables, on plain numpy arrays.

- :func:`mean_sd`: the mean ± SD over repetitions of the random-choice baseline (Table 1).
- :func:`contingency_2x2` and :func:`chi2_independence`: attribute × discrimination counts and
  Pearson's χ² test of independence (Table 2, appendix A.2).
- :func:`pearson` and :func:`least_squares_line`: Min-K% Prob against accuracy (Fig 6 / Table 3).

The χ² test is computed here from its definition (expected counts from the margins, Pearson's
statistic, the χ² survival function); with ``correction=True`` it applies Yates' continuity
correction exactly as ``scipy.stats.chi2_contingency`` does with the same setting: only when the
table has one degree of freedom, each observed count moves toward its expected count by
min(0.5, |O − E|).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

#: Yates' continuity correction by default, as ``scipy.stats.chi2_contingency`` (the paper's
#: tool) applies it to a 2×2 table unless told otherwise.
YATES_DEFAULT = True


@dataclass(frozen=True)
class MeanSD:
    """Mean and sample SD (ddof = 1) of the finite values; ``n`` how many there were."""

    mean: float
    sd: float
    n: int


def mean_sd(values: ArrayLike) -> MeanSD:
    """Mean and sample standard deviation (divisor n − 1) of the finite entries of ``values``
    (any shape, flattened). NaN mean with no entry; NaN SD with fewer than two."""
    array = np.asarray(values, dtype=np.float64).ravel()
    array = array[np.isfinite(array)]
    if array.size == 0:
        return MeanSD(float("nan"), float("nan"), 0)
    sd = float(np.std(array, ddof=1)) if array.size > 1 else float("nan")
    return MeanSD(float(array.mean()), sd, int(array.size))


def contingency_2x2(attribute: ArrayLike, discriminating: ArrayLike) -> np.ndarray:
    """Counts of items by attribute (rows: present, absent) and discrimination (columns:
    discriminating, not discriminating), shape (2, 2), int64.

    ``attribute`` and ``discriminating`` are booleans of shape (n_items,); an item missing from
    either (NaN or None after ``np.asarray(..., dtype=float)``) is left out.
    """
    has = np.asarray(attribute, dtype=np.float64).ravel()
    good = np.asarray(discriminating, dtype=np.float64).ravel()
    if has.shape != good.shape:
        raise ValueError(f"attribute {has.shape} and discriminating {good.shape} differ")
    known = np.isfinite(has) & np.isfinite(good)
    has_it, is_good = has[known] > 0, good[known] > 0
    return np.array([[np.sum(has_it & is_good), np.sum(has_it & ~is_good)],
                     [np.sum(~has_it & is_good), np.sum(~has_it & ~is_good)]], dtype=np.int64)


@dataclass(frozen=True)
class Chi2Result:
    """Pearson's χ² test of independence of a contingency table."""

    statistic: float
    p_value: float
    dof: int
    #: Expected counts under independence, the table's shape.
    expected: np.ndarray
    #: Whether Yates' correction was applied (asked for and the table has one dof).
    corrected: bool


def chi2_independence(table: ArrayLike, correction: bool = YATES_DEFAULT) -> Chi2Result:
    """χ² test of independence of an (r, c) table of counts.

    Expected counts E = row total × column total / n; statistic Σ (O − E)² / E with
    (r − 1)(c − 1) degrees of freedom; p = P(χ²_dof ≥ statistic). With ``correction`` and one
    degree of freedom, Yates' correction first moves each O toward E by min(0.5, |O − E|).
    A table with an empty row or column (some E = 0) has no test: statistic and p are NaN
    (scipy raises an error there). A table with no degree of freedom gives 0 and p = 1.
    """
    observed = np.asarray(table, dtype=np.float64)
    if observed.ndim != 2 or np.any(observed < 0) or not np.all(np.isfinite(observed)):
        raise ValueError("table must be a 2-D array of non-negative counts")
    total = observed.sum()
    expected = (np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total if total > 0
                else np.zeros_like(observed))
    dof = (observed.shape[0] - 1) * (observed.shape[1] - 1)
    if dof == 0:
        return Chi2Result(0.0, 1.0, 0, expected, False)
    if np.any(expected == 0):
        return Chi2Result(float("nan"), float("nan"), dof, expected, False)
    corrected = bool(correction and dof == 1)
    if corrected:
        difference = expected - observed
        observed = observed + np.sign(difference) * np.minimum(0.5, np.abs(difference))
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    return Chi2Result(statistic, float(stats.chi2.sf(statistic, dof)), dof, expected, corrected)


@dataclass(frozen=True)
class Correlation:
    """Pearson's r of the finite pairs, its two-sided p (H0: ρ = 0) and the pairs used."""

    r: float
    p_value: float
    n: int


def _finite_pairs(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    xs = np.asarray(x, dtype=np.float64).ravel()
    ys = np.asarray(y, dtype=np.float64).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x {xs.shape} and y {ys.shape} differ")
    keep = np.isfinite(xs) & np.isfinite(ys)
    return xs[keep], ys[keep]


def pearson(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Pearson's r over the pairs where both ``x`` and ``y`` (shape (n,)) are finite.

    r = Σ dx·dy / sqrt(Σ dx² · Σ dy²) with deviations from the means; p from Student's t with
    n − 2 degrees of freedom, t = r·sqrt((n − 2)/(1 − r²)), two-sided (what
    ``scipy.stats.pearsonr`` reports). NaN r and p with fewer than three pairs or a constant
    variable.
    """
    xs, ys = _finite_pairs(x, y)
    n = int(xs.size)
    if n < 3:
        return Correlation(float("nan"), float("nan"), n)
    dx, dy = xs - xs.mean(), ys - ys.mean()
    denominator = np.sqrt(np.sum(dx * dx) * np.sum(dy * dy))
    if denominator == 0:
        return Correlation(float("nan"), float("nan"), n)
    r = float(np.clip(np.sum(dx * dy) / denominator, -1.0, 1.0))
    if abs(r) == 1.0:
        return Correlation(r, 0.0, n)
    t = r * np.sqrt((n - 2) / (1.0 - r * r))
    return Correlation(r, float(2.0 * stats.t.sf(abs(t), n - 2)), n)


def least_squares_line(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """(slope, intercept) of the ordinary least-squares line of y on x over the finite pairs;
    NaN for fewer than two pairs or a constant x."""
    xs, ys = _finite_pairs(x, y)
    if xs.size < 2:
        return float("nan"), float("nan")
    dx = xs - xs.mean()
    spread = float(np.sum(dx * dx))
    if spread == 0:
        return float("nan"), float("nan")
    slope = float(np.sum(dx * (ys - ys.mean())) / spread)
    return slope, float(ys.mean() - slope * xs.mean())
