"""Multiple-comparison control for a family of p-values: Benjamini–Hochberg and Holm.

Both take p-values of any shape and return adjusted values of the same shape. NaN p-values (a
test that could not be run, e.g. an item without usable data) stay NaN and do not count in the
family size m: a test that was never run cannot produce a false discovery.

Benjamini–Hochberg (1995), false discovery rate, step-up. With the m finite p-values sorted,
p_(1) ≤ … ≤ p_(m), the q-value of the i-th is

    q_(i) = min_{j ≥ i} min(1, m · p_(j) / j),

so rejecting every test with q ≤ α controls the FDR at α for independent (or positively
dependent, PRDS) tests. The running minimum from the top makes q monotone in p.

Holm (1979), family-wise error rate, step-down. The adjusted value of the i-th smallest is

    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)),

and rejecting every test with p̃ ≤ α controls the FWER at α under any dependence.

References: Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57,
289–300. Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J.
Statist. 6, 65–70.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import FloatArray


def _finite_p_values(p_values: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The p-values as a float array and its finite entries (flat), checked to lie in [0, 1]."""
    p = np.asarray(p_values, dtype=np.float64)
    finite = p[np.isfinite(p)]
    if np.isinf(p).any() or (finite < 0).any() or (finite > 1).any():
        raise ValueError("p-values must lie in [0, 1] (NaN allowed for tests not run)")
    return p, finite


def _put_back(p: FloatArray, adjusted_finite: FloatArray) -> FloatArray:
    """An array shaped like ``p``: NaN where p is NaN, the adjusted values elsewhere in order."""
    out = np.full(p.shape, np.nan)
    out[np.isfinite(p)] = adjusted_finite
    return out


def benjamini_hochberg(p_values: ArrayLike) -> FloatArray:
    """Benjamini–Hochberg q-values (FDR-adjusted p-values), same shape as ``p_values``.

    ``p_values`` of any shape, entries in [0, 1] or NaN; the family is all finite entries (the
    whole array, flattened), m = their count. NaN in, NaN out. Each q ≥ its p and ≤ 1, and q is
    non-decreasing in p. Raises ValueError for values outside [0, 1] or infinite.
    """
    p, finite = _finite_p_values(p_values)
    m = finite.size
    if m == 0:
        return np.full(p.shape, np.nan)
    order = np.argsort(finite, kind="stable")
    ranks = np.arange(1, m + 1, dtype=np.float64)
    scaled = finite[order] * m / ranks
    # Step-up: the q of the i-th smallest is the smallest scaled value at or above its rank, so
    # a running minimum taken from the largest p downwards.
    q_sorted = np.minimum.accumulate(scaled[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.minimum(q_sorted, 1.0)
    return _put_back(p, q)


def holm(p_values: ArrayLike) -> FloatArray:
    """Holm step-down adjusted p-values (family-wise error rate), same shape as ``p_values``.

    Same conventions as :func:`benjamini_hochberg`: NaN stays NaN and is not counted in m; the
    adjusted values are ≥ p, ≤ 1 and non-decreasing in p.
    """
    p, finite = _finite_p_values(p_values)
    m = finite.size
    if m == 0:
        return np.full(p.shape, np.nan)
    order = np.argsort(finite, kind="stable")
    multipliers = np.arange(m, 0, -1, dtype=np.float64)  # m − j + 1 for j = 1 … m
    scaled = np.minimum(finite[order] * multipliers, 1.0)
    # Step-down: a test is rejected only if every smaller p was, hence the running maximum.
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return _put_back(p, adjusted)
