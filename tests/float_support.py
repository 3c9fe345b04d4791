"""Comparisons of one number reached by two routes, tolerant of its last bits.

A test that computes a value one way (a slow reference, a brute force) and compares it with the
same value computed by the code under test must not let the last bit decide: numpy's SIMD
``exp``/``log`` and BLAS kernels differ between CPUs (an AMD EPYC host failed the contour test on
``density >= region.level``). These helpers allow ``REL_SLACK`` relative (and an optional
absolute) slack and nothing more; tests/test_float_tolerance.py perturbs the compared values by a
few ulps and checks every helper still holds.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Relative slack for one number computed by two routes: ~4,500 ulps of a double, far below any
#: difference a test means to detect.
REL_SLACK = 1e-12


def _slack(reference: ArrayLike, rel: float, atol: float) -> NDArray[np.float64]:
    return rel * np.abs(np.asarray(reference, dtype=float)) + atol


def at_least(values: ArrayLike, level: ArrayLike, rel: float = REL_SLACK,
             atol: float = 0.0) -> NDArray[np.bool_]:
    """``values >= level`` where a value equal to the level up to the slack counts as equal.

    Shapes broadcast; returns a boolean array of the broadcast shape.
    """
    return np.asarray(values, dtype=float) >= np.asarray(level, dtype=float) - _slack(level, rel,
                                                                                        atol)


def clearly_above(values: ArrayLike, level: ArrayLike, rel: float = REL_SLACK,
                  atol: float = 0.0) -> NDArray[np.bool_]:
    """``values > level`` by more than the slack (a value equal up to the slack is not above)."""
    return np.asarray(values, dtype=float) > np.asarray(level, dtype=float) + _slack(level, rel,
                                                                                      atol)


def picks_a_maximum(values: ArrayLike, chosen: ArrayLike, rel: float = REL_SLACK,
                    atol: float = 0.0) -> NDArray[np.bool_]:
    """Whether each row's ``chosen`` column holds the row's maximum up to the slack.

    ``values`` has shape (n, k) and ``chosen`` shape (n,) of column indices; returns shape (n,).
    Where two columns tie up to the last bits, either is a right pick (``argmax`` of a reference
    computed by another route may name the other one).
    """
    table = np.asarray(values, dtype=float)
    rows = np.arange(table.shape[0])
    best = table.max(axis=1)
    return at_least(table[rows, np.asarray(chosen, dtype=int)], best, rel, atol)


def holds_the_coverage(density: ArrayLike, level: float, coverage: float) -> bool:
    """The highest-density region's level check: at least ``coverage`` of the points have
    density ≥ ``level`` and fewer than ``coverage`` lie clearly above it (so no higher level
    would keep ``coverage``). ``density``: the KDE at the points, shape (n,)."""
    return bool(at_least(density, level).mean() >= coverage
                and clearly_above(density, level).mean() < coverage)
