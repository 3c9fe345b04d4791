"""analytics.contours.convex_hull (Qhull through scipy) gives the vertices, in the order, of the
monotone chain it replaced: counter-clockwise from the lowest (x, y), edge points left out.

The reference below is Andrew's monotone chain as the module wrote it before. On points that
are collinear only up to rounding (2·t + 1 in floating point) the old chain's cross products
were rounding noise and it could keep zigzag "vertices" along the line; Qhull sees no area
there and the hull is the segment's two ends, which is what the module documents.
"""

from __future__ import annotations

import numpy as np
import pytest

from analytics.contours import central_region, convex_hull


def _monotone_chain(points: np.ndarray) -> np.ndarray:
    """The replaced hull: counter-clockwise from the lowest (x, y), collinear points dropped."""
    unique = np.unique(np.asarray(points, np.float64).reshape(-1, 2), axis=0)
    if len(unique) <= 2:
        return unique

    def cross(o, a, b) -> float:
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


def _clouds(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "normal":
        return rng.normal(0.0, 1.0, (n, 2))
    if kind == "theta_ctt":  # θ against an integer CTT score: ties and vertical runs
        return np.column_stack([rng.normal(0.0, 1.0, n), rng.integers(10, 30, n)])
    if kind == "grid":  # many exact ties and exactly collinear edge points
        return rng.integers(0, 4, (n, 2)).astype(np.float64)
    return np.column_stack([rng.normal(0.0, 1.0, n), np.full(n, 3.0)])  # a horizontal line


@pytest.mark.parametrize("kind", ["normal", "theta_ctt", "grid", "horizontal"])
def test_hull_is_the_monotone_chain_vertex_for_vertex(kind):
    rng = np.random.default_rng(42)
    for _ in range(500):
        points = _clouds(rng, kind, int(rng.integers(1, 60)))
        np.testing.assert_array_equal(convex_hull(points), _monotone_chain(points))


def test_hull_of_a_square_starts_at_its_lowest_corner_and_turns_left():
    points = [(1, 1), (0.5, 0.5), (0, 1), (1, 0), (0, 0), (0.2, 0.7), (0.5, 0.0)]
    np.testing.assert_array_equal(convex_hull(points), [[0, 0], [1, 0], [1, 1], [0, 1]])


def test_points_on_a_line_up_to_rounding_give_the_segment():
    t = np.random.default_rng(0).uniform(0.0, 1.0, 40)
    points = np.column_stack([t, 2.0 * t + 1.0])
    ends = points[[np.argmin(t), np.argmax(t)]]
    np.testing.assert_array_equal(convex_hull(points), ends)
    xs, ys = central_region(points[:, 0], points[:, 1], 1.0)
    assert len(xs) == 3 and (xs[0], ys[0]) == (xs[-1], ys[-1])
