"""The closed curve drawn around the central part of one model's points.

A model contributes one point per response pattern (shuffle × prompt variant × run). The curve
is the convex hull of the ``coverage`` share of its points that lie closest to the centre, in the
Mahalanobis sense (median centre, covariance of the points, a small ridge so that degenerate
clouds such as a constant CTT still work). Pure numpy, no plotting.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


def central_points(x: ArrayLike, y: ArrayLike, coverage: float = 0.9) -> FloatArray:
    """The ``ceil(coverage·n)`` finite points closest to the centre, shape (m, 2)."""
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1]; got {coverage}")
    points = np.column_stack([np.asarray(x, np.float64), np.asarray(y, np.float64)])
    points = points[np.isfinite(points).all(axis=1)]
    if len(points) == 0:
        return points
    centre = np.median(points, axis=0)
    spread = points - centre
    covariance = np.atleast_2d(np.cov(spread, rowvar=False)) if len(points) > 1 else np.eye(2)
    scale = np.maximum(np.diag(covariance), 0.0)
    ridge = 1e-6 * max(float(scale.max()), 1.0) + 1e-12
    covariance = covariance + np.diag(np.where(scale > 0, scale * 1e-3, 0.0) + ridge)
    distance = np.einsum("ij,jk,ik->i", spread, np.linalg.inv(covariance), spread)
    keep = math.ceil(coverage * len(points) - 1e-9)
    order = np.argsort(distance, kind="stable")
    return points[order[:keep]]


def convex_hull(points: ArrayLike) -> FloatArray:
    """Vertices of the convex hull in counter-clockwise order (Andrew's monotone chain).

    Returns shape (h, 2); fewer than three vertices when the points are collinear or repeated.
    """
    unique = np.unique(np.asarray(points, np.float64).reshape(-1, 2), axis=0)
    if len(unique) <= 2:
        return unique

    def cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))

    lower: list[np.ndarray] = []
    for point in unique:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], point) <= 0:
            lower.pop()
        lower.append(point)
    upper: list[np.ndarray] = []
    for point in unique[::-1]:
        while len(upper) >= 2 and cross(upper[-2], upper[-1], point) <= 0:
            upper.pop()
        upper.append(point)
    return np.array(lower[:-1] + upper[:-1])


def central_region(
    x: ArrayLike, y: ArrayLike, coverage: float = 0.9
) -> tuple[FloatArray, FloatArray] | None:
    """Closed curve (xs, ys) around the central ``coverage`` of the points, first point repeated
    at the end; None when there are no finite points."""
    hull = convex_hull(central_points(x, y, coverage))
    if len(hull) == 0:
        return None
    closed = np.vstack([hull, hull[:1]])
    return closed[:, 0], closed[:, 1]
