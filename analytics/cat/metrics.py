"""Summaries of CAT paths: error by step, the length a target error needs, item overlap, and
the guess/slip setting whose SE curve is nearest a model's."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.irt import FloatArray

#: The key type of nearest_curve's candidates (a (guess, slip) pair on the CAT page).
Key = TypeVar("Key")


def mse_by_step(theta_path: FloatArray, true_theta: ArrayLike) -> FloatArray:
    """E[(θ̂_t − θ₀)²] over simulees at each step, shape (T + 1,) for ``theta_path`` (n, T + 1)
    (column 0 is the start)."""
    error = np.asarray(theta_path) - np.asarray(true_theta, dtype=np.float64)[:, None]
    return np.mean(error**2, axis=0)


def length_to_reach(curve: ArrayLike, target: float) -> int | None:
    """The first step t ≥ 1 from which ``curve`` stays ≤ ``target`` to its end (``curve``
    indexed by step, column 0 the start), None when its last step is above it.

    "Stays" matters for ML, whose MSE can dip early and rise again when estimates hit the
    bounds.
    """
    values = np.asarray(curve, dtype=np.float64)[1:]
    above = np.flatnonzero(~(values <= target))
    if above.size == 0:
        return 1 if values.size else None
    return int(above[-1]) + 2 if above[-1] + 1 < values.size else None


def jaccard(first: ArrayLike, second: ArrayLike) -> float:
    """|A ∩ B| / |A ∪ B| of two item sets (NaN when both are empty)."""
    a, b = set(np.asarray(first).tolist()), set(np.asarray(second).tolist())
    union = len(a | b)
    return len(a & b) / union if union else float("nan")


def jaccard_matrix(item_sets: Sequence[ArrayLike], n_items: int) -> FloatArray:
    """Pairwise Jaccard overlap of m item sets, shape (m, m), from one membership product.

    ``item_sets[i]`` holds bank indices in [0, n_items); repeats count once.
    """
    member = np.zeros((len(item_sets), n_items))
    for row, items in enumerate(item_sets):
        member[row, np.asarray(items, dtype=np.intp)] = 1.0
    shared = member @ member.T
    sizes = member.sum(axis=1)
    union = sizes[:, None] + sizes[None, :] - shared
    with np.errstate(invalid="ignore"):
        return shared / union


def mean_by_step(values: FloatArray) -> FloatArray:
    """Column means of an (n, T + 1) path array (e.g. SE), ignoring non-finite entries (the
    start's SE is inf)."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    total = np.where(finite, values, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def median_by_step(values: FloatArray) -> FloatArray:
    """Column medians of an (n, T + 1) path array (e.g. SE), shape (T + 1,).

    A robust summary where a few values are huge: an ML estimate at its bound has an SE in the
    thousands, which drags a mean anywhere. NaN entries are left out; an infinite SE (no
    information yet) counts as the largest value, so an infinite median says that most
    simulees had no finite SE. A column without any finite value (column 0 of every path, the
    SE before the first item) gives NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        median = np.nanmedian(values, axis=0)
    return np.where(np.isfinite(values).any(axis=0), median, np.nan)


def nearest_curve(curve: ArrayLike, candidates: Mapping[Key, ArrayLike]) -> Key | None:
    """The key of the candidate curve nearest ``curve`` (root mean square difference over the
    steps both have finite values for); None when no candidate shares a step with it."""
    target = np.asarray(curve, dtype=np.float64)
    best: Key | None = None
    best_distance = np.inf
    for key, values in candidates.items():
        other = np.asarray(values, dtype=np.float64)
        steps = min(target.shape[0], other.shape[0])
        diff = target[:steps] - other[:steps]
        diff = diff[np.isfinite(diff)]
        if diff.size and (distance := float(np.sqrt(np.mean(diff**2)))) < best_distance:
            best, best_distance = key, distance
    return best


def steps_within(theta_path: ArrayLike, reference: ArrayLike, tolerance: ArrayLike
                 ) -> NDArray[np.intp]:
    """For each row, the first step t ≥ 1 from which |θ̂_t − reference| ≤ tolerance holds for
    every later step too; −1 when the last step is still outside (shape (n,)).

    ``theta_path`` is (n, T + 1) with column 0 the start; ``reference`` and ``tolerance`` (n,).
    """
    path = np.asarray(theta_path, dtype=np.float64)[:, 1:]
    inside = np.abs(path - np.asarray(reference)[:, None]) <= np.asarray(tolerance)[:, None]
    # Stays inside from t on: a reversed cumulative AND.
    stays = np.flip(np.logical_and.accumulate(np.flip(inside, axis=1), axis=1), axis=1)
    first = stays.argmax(axis=1)
    return np.where(stays.any(axis=1), first + 1, -1)
