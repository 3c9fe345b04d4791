"""The curve drawn around one model's points: a density contour, as in the paper's figures.

A model contributes one point per repetition (option shuffle or sampling seed × prompt variant
× run), e.g. θ (logits) against CTT score (items correct). The curve is the boundary of the
*highest-density region* (HDR) holding ``coverage`` (90%) of the points:

1. a 2-D Gaussian kernel density estimate f of the points (``scipy.stats.gaussian_kde``,
   Scott's bandwidth n^(-1/6) times the points' covariance);
2. the level t = the ``ceil(coverage·n)``-th largest of f evaluated at the points themselves
   (the lower 10th percentile, as an order statistic), so that at least 90% of the points
   have f ≥ t;
3. the contour line(s) f = t, traced by marching squares (``contourpy``) on f evaluated on a
   regular grid; only the line goes to the browser, not the grid (a grid per run and area made
   pages slow to send and draw). The grid is laid along the principal axes of the kernel's
   covariance: there the Gaussian kernel is a product of one factor per axis, so f on the whole
   grid is one matrix product (exact, and ~30× faster than evaluating the kernel at every node;
   scipy's evaluation of 24 runs' grids took most of a page's time).

With fewer than :data:`MIN_KDE_POINTS` points, or when the points' covariance is singular
(e.g. every CTT equal, or every point on one line), no density can be estimated: the curve
falls back to the convex hull of the central 90% of the points (Mahalanobis distance to the
median), and with one or two distinct points there is no curve at all. Each result says which
rule produced it. Pure numpy/scipy (the hull is ``scipy.spatial.ConvexHull``) and contourpy's
marching squares, no plotting; ``dashboard.figures`` draws the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, cast

import numpy as np
from contourpy import LineType, contour_generator
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import ConvexHull, QhullError
from scipy.stats import gaussian_kde

FloatArray = NDArray[np.float64]

#: Fewest points a density contour is estimated from; below it the hull is drawn.
MIN_KDE_POINTS = 5
#: Grid points per axis on which the density is evaluated for its contour line.
GRID_POINTS = 120
#: The grid reaches this many kernel bandwidths beyond the outermost points.
GRID_MARGIN = 3.0
#: Smallest eigenvalue of the points' correlation matrix below which it counts as singular.
_SINGULAR = 1e-10

RegionKind = Literal["kde", "hull", "none"]


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
    """Vertices of the convex hull of ``points`` (shape (n, 2)), counter-clockwise from the
    lowest x (lowest y among ties), by ``scipy.spatial.ConvexHull`` (Qhull).

    Returns shape (h, 2); points on an edge are not vertices. Repeated points count once; one or
    two distinct points are returned as they are (sorted), and collinear points, which have no
    area for Qhull, give the segment's two ends.
    """
    unique = np.unique(np.asarray(points, np.float64).reshape(-1, 2), axis=0)  # sorted by x, y
    if len(unique) <= 2:
        return unique
    try:
        vertices = ConvexHull(unique).vertices  # counter-clockwise in 2-D, any start
    except QhullError:  # no area: every point on one line, whose ends sort first and last
        return unique[[0, -1]]
    # The rows of ``unique`` are sorted, so the smallest index is the lowest (x, y) vertex.
    return unique[np.roll(vertices, -int(np.argmin(vertices)))]


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


def finite_points(x: ArrayLike, y: ArrayLike) -> FloatArray:
    """The points with both coordinates finite, shape (n, 2)."""
    points = np.column_stack([np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()])
    return points[np.isfinite(points).all(axis=1)]


def is_singular(points: ArrayLike) -> bool:
    """True when the covariance of ``points`` (shape (n, 2)) cannot be inverted: a coordinate
    is constant, or the points lie on one line (correlation ±1)."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    if len(points) < 3:
        return True
    spread = points.std(axis=0)
    if not (spread > 0).all():
        return True
    correlation = np.corrcoef(points, rowvar=False)
    return bool(np.linalg.eigvalsh(correlation).min() < _SINGULAR)


def hdr_level(density_at_points: ArrayLike, coverage: float = 0.9) -> float:
    """The density level t of the highest-density region holding ``coverage`` of the points.

    ``density_at_points`` is the density estimate evaluated at each point, shape (n,). t is
    its ``ceil(coverage·n)``-th largest value: at least ``coverage`` of the points have a
    density ≥ t, and t is the largest level for which that holds.
    """
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1]; got {coverage}")
    values = np.sort(np.asarray(density_at_points, np.float64).ravel())[::-1]
    if len(values) == 0:
        raise ValueError("no density values")
    keep = math.ceil(coverage * len(values) - 1e-9)
    return float(values[keep - 1])


@dataclass(frozen=True)
class DensityRegion:
    """What to draw around one model's points.

    kind: ``"kde"`` (the HDR contour at density ``level``, traced as ``curve_x``, ``curve_y``),
    ``"hull"`` (the fallback closed curve ``curve_x``, ``curve_y``) or ``"none"`` (nothing).
    Separate pieces of a curve are divided by NaN in ``curve_x`` and ``curve_y``. ``reason``
    says in words why a fallback was used ("" for ``"kde"``). ``n_points`` counts the finite
    points used; ``kde`` is the fitted estimate. A hull of collinear points is a segment (its
    two ends, closed). For ``"kde"``, ``grid_x`` and ``grid_y`` span the points plus
    :data:`GRID_MARGIN` bandwidths on each axis, and :attr:`density` is the estimate there.
    """

    kind: RegionKind
    coverage: float
    n_points: int
    reason: str = ""
    level: float | None = None
    grid_x: FloatArray | None = None
    grid_y: FloatArray | None = None
    curve_x: FloatArray | None = None
    curve_y: FloatArray | None = None
    kde: gaussian_kde | None = None

    @cached_property
    def density(self) -> FloatArray | None:
        """The estimate on the grid ``grid_x`` × ``grid_y``, shape (len(grid_y), len(grid_x))
        (rows = y), in 1/(x unit · y unit); None without an estimate. Computed on first use
        (the curve is traced on a grid of its own, see :func:`principal_axis_density`)."""
        if self.kde is None or self.grid_x is None or self.grid_y is None:
            return None
        mesh_x, mesh_y = np.meshgrid(self.grid_x, self.grid_y)
        return self.kde(np.vstack([mesh_x.ravel(), mesh_y.ravel()])).reshape(mesh_x.shape)

    def contains(self, x: ArrayLike, y: ArrayLike) -> NDArray[np.bool_]:
        """Whether each point lies in the region (kde: density ≥ level), shape (n,).

        Only for ``"kde"`` regions, whose estimate is kept in ``kde``."""
        if self.kind != "kde" or self.kde is None or self.level is None:
            raise ValueError("only a density region can test points")
        points = np.vstack([np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()])
        return self.kde(points) >= self.level


def principal_axis_density(kde: gaussian_kde, grid_points: int = GRID_POINTS,
                           margin: float = GRID_MARGIN
                           ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """A 2-D Gaussian KDE evaluated on a regular grid laid along the principal axes of its
    kernel covariance K = V·diag(λ)·Vᵀ.

    In the coordinates u = Vᵀ·(x − origin) the kernel factorises,
    N(x; pᵢ, K) = φ(u₁ − uᵢ₁; λ₁)·φ(u₂ − uᵢ₂; λ₂), so the density on the grid of every
    (s_j, t_k) is (1/n)·E₁ᵀE₂ with E₁[i, j] = φ(s_j − uᵢ₁; λ₁) and E₂[i, k] = φ(t_k − uᵢ₂; λ₂)
    (the estimate's weights are 1/n each).

    Returns (s, t, density, origin, axes): the grid's coordinates along the two axes, shape
    (grid_points,) each, spanning the points ± ``margin``·√λ; the density, shape
    (len(t), len(s)) (rows = t); the origin, shape (2,); and V, shape (2, 2), whose columns
    are the axes. A grid node (s_j, t_k) lies at x = origin + V·(s_j, t_k).
    """
    points = np.asarray(kde.dataset, np.float64)  # shape (2, n)
    variances, axes = np.linalg.eigh(np.asarray(kde.covariance, np.float64))
    origin = points.mean(axis=1)
    projected = axes.T @ (points - origin[:, None])  # shape (2, n)
    spread = margin * np.sqrt(variances)
    s = np.linspace(projected[0].min() - spread[0], projected[0].max() + spread[0], grid_points)
    t = np.linspace(projected[1].min() - spread[1], projected[1].max() + spread[1], grid_points)
    along_s = np.exp(-0.5 * (s[None, :] - projected[0][:, None]) ** 2 / variances[0])
    along_t = np.exp(-0.5 * (t[None, :] - projected[1][:, None]) ** 2 / variances[1])
    weights = np.asarray(kde.weights, np.float64)
    norm = 1.0 / (2.0 * np.pi * np.sqrt(variances[0] * variances[1]))
    density = norm * (along_t.T * weights) @ along_s  # shape (len(t), len(s))
    return s, t, density, origin, axes


def density_region(x: ArrayLike, y: ArrayLike, coverage: float = 0.9,
                   grid_points: int = GRID_POINTS) -> DensityRegion:
    """The highest-density region holding ``coverage`` of the points (x, y), or its fallback.

    x, y: one value per repetition, shape (n,) each (non-finite pairs are dropped). The KDE
    is ``scipy.stats.gaussian_kde`` with its default (Scott's) bandwidth; the line is traced
    on :func:`principal_axis_density`'s grid, ``grid_points`` per axis.
    """
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1]; got {coverage}")
    points = finite_points(x, y)
    n = len(points)
    distinct = len(np.unique(points, axis=0)) if n else 0
    if distinct <= 2:
        return DensityRegion("none", coverage, n, reason=(
            f"{distinct} distinct point(s): no curve"))
    if n < MIN_KDE_POINTS or is_singular(points):
        why = (f"only {n} points" if n < MIN_KDE_POINTS else
               "the points lie on one line (e.g. one coordinate is constant)")
        hull = central_region(points[:, 0], points[:, 1], coverage)
        if hull is None or len(np.unique(np.column_stack(hull), axis=0)) < 2:
            return DensityRegion("none", coverage, n, reason=f"{why}: no curve")
        return DensityRegion("hull", coverage, n, reason=f"{why}: convex hull of the central "
                             f"{coverage:.0%} instead of a density contour",
                             curve_x=hull[0], curve_y=hull[1])
    kde = gaussian_kde(points.T)
    level = hdr_level(kde(points.T), coverage)
    bandwidth = np.sqrt(np.diag(kde.covariance))
    low = points.min(axis=0) - GRID_MARGIN * bandwidth
    high = points.max(axis=0) + GRID_MARGIN * bandwidth
    s, t, density, origin, axes = principal_axis_density(kde, grid_points)
    along_s, along_t = level_curves(s, t, density, level)
    curve = origin[:, None] + axes @ np.vstack([along_s, along_t])  # NaN gaps stay NaN
    return DensityRegion("kde", coverage, n, level=level,
                         grid_x=np.linspace(low[0], high[0], grid_points),
                         grid_y=np.linspace(low[1], high[1], grid_points),
                         curve_x=curve[0], curve_y=curve[1], kde=kde)


def level_curves(grid_x: ArrayLike, grid_y: ArrayLike, values: ArrayLike,
                 level: float) -> tuple[FloatArray, FloatArray]:
    """The lines where ``values`` (shape (len(grid_y), len(grid_x)), rows = y) cross
    ``level``, linearly interpolated between grid points; x and y arrays with NaN between
    separate lines (empty when the level is never crossed)."""
    lines = contour_generator(x=np.asarray(grid_x, np.float64), y=np.asarray(grid_y, np.float64),
                              z=np.asarray(values, np.float64),
                              line_type=LineType.Separate).lines(level)
    if not lines:
        return np.empty(0), np.empty(0)
    gap = np.full((1, 2), np.nan)
    # LineType.Separate: one (m, 2) array of points per line (contourpy types every layout).
    separate = cast(list[FloatArray], lines)
    joined = np.vstack([part for line in separate for part in (line, gap)][:-1])
    return joined[:, 0], joined[:, 1]
